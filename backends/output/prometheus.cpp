#include "backends/output/prometheus.h"

#include "backends/output/folded_output.h"
#include "backends/output/json_value.h"
#include "backends/output/text_value.h"

#include <algorithm>
#include <optional>
#include <set>

namespace ubtrace::output {

using runtime::AggKind;

namespace {

bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == ':' || (!first && c >= '0' && c <= '9');
}

// A sample's value, when it is a number.
std::optional<std::string> number(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Int:
    return json_int(v.sint);
  case Value::Kind::UInt:
    return json_uint(v.uint);
  case Value::Kind::Symbolic:
    return v.signed_number ? json_int(v.sint) : json_uint(v.uint);
  case Value::Kind::Bool:
    return std::string(v.boolean ? "1" : "0");
  default:
    return std::nullopt;
  }
}

// One key part as a label value: a stack as its frames outermost first.
// How the exposition is written: the dialect, and what names stack frames.
struct Style {
  Exposition dialect;
  const FormatContext *ctx;
};

std::string label_text(const Value &v, const Style &style) {
  if (!v.stack)
    return text_of(v);
  std::string out;
  for (const auto &frame : folded_frames(v, style.ctx))
    out += (out.empty() ? "" : ";") + frame;
  return out;
}

// The labels of a key (printed_map.h's key_part_names, made valid label
// names); extra labels (le) go after.
std::string labels(const Style &style, const PrintedMap &map,
                   const PrintedMap::Entry &e, const std::string &extra = "") {
  std::vector<std::string> parts;
  const auto values = key_parts(e.key);
  const auto names = key_part_names(map, e.key);
  for (size_t i = 0; i < values.size(); i++) {
    std::string name = prometheus_name(names[i], "");
    // A record field may be named as a label the exposition uses itself.
    if (name == "le" || name == "quantile" || name.starts_with("__"))
      name = "key_" + name;
    parts.push_back(name + "=\"" +
                    prometheus_escape(label_text(*values[i], style)) + "\"");
  }
  if (!extra.empty())
    parts.push_back(extra);
  if (parts.empty())
    return "";
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); i++)
    out += (i ? "," : "") + parts[i];
  return out + "}";
}

const char *agg_name(AggKind agg) {
  switch (agg) {
  case AggKind::None:
    return "a value";
  case AggKind::Count:
    return "count()";
  case AggKind::Sum:
    return "sum()";
  case AggKind::Min:
    return "min()";
  case AggKind::Max:
    return "max()";
  case AggKind::Avg:
    return "avg()";
  case AggKind::Stats:
    return "stats()";
  case AggKind::Hist:
    return "hist()";
  case AggKind::LHist:
    return "lhist()";
  case AggKind::TSeries:
    return "tseries()";
  }
  return "?";
}

void family(std::string &out, const std::string &name, const char *type,
            const PrintedMap &map, const Style &style) {
  const Exposition dialect = style.dialect;
  // HELP text escapes \\ and newlines, and in OpenMetrics quotes too.
  std::string help = map.help.empty()
                         ? "ubtrace map " + map.name + ", " + agg_name(map.agg)
                         : map.help;
  std::string escaped;
  for (char c : help)
    escaped += c == '\\'   ? "\\\\"
               : c == '\n' ? "\\n"
               : c == '"' && dialect == Exposition::OpenMetrics
                   ? "\\\""
                   : std::string(1, c);
  out += "# HELP " + name + " " + escaped + "\n";
  out += "# TYPE " + name + " " + type + "\n";
}

// A counter only goes up: count() always, sum() while no entry is
// negative (a sum of signed values that went below zero is a gauge).
bool is_counter(const PrintedMap &map) {
  if (map.agg == AggKind::Count)
    return true;
  if (map.agg != AggKind::Sum)
    return false;
  return std::none_of(
      map.entries.begin(), map.entries.end(), [](const PrintedMap::Entry &e) {
        return e.value.kind == Value::Kind::Int && e.value.sint < 0;
      });
}

void plain_family(std::string &out, const PrintedMap &map,
                  const std::string &stem, const Style &style) {
  const bool counter = is_counter(map);
  // @requests_total = count() is ubtrace_requests_total, not ..._total_total.
  std::string base = stem;
  if (counter && base.ends_with("_total") && base.size() > 6)
    base.resize(base.size() - 6);
  const std::string name = counter ? base + "_total" : stem;
  std::string samples;
  for (const auto &e : map.entries)
    if (auto v = number(e.value))
      samples += name + labels(style, map, e) + " " + *v + "\n";
  if (samples.empty())
    return;
  // OpenMetrics names a counter's family without the _total its samples
  // carry; the 0.0.4 text format names it as its samples.
  family(out, counter && style.dialect == Exposition::OpenMetrics ? base : name,
         counter ? "counter" : "gauge", map, style);
  out += samples;
}

void stats_family(std::string &out, const PrintedMap &map,
                  const std::string &stem, const Style &style) {
  family(out, stem, "summary", map, style);
  for (const auto &e : map.entries) {
    out += stem + "_sum" + labels(style, map, e) + " " +
           number(e.total).value_or("0") + "\n";
    out += stem + "_count" + labels(style, map, e) + " " +
           std::to_string(e.count) + "\n";
  }
  // The average users read off avg() directly.
  const std::string avg = stem + "_average";
  family(out, avg, "gauge", map, style);
  for (const auto &e : map.entries) {
    Value a = e.value;
    if (a.kind == Value::Kind::Record && !a.elements.empty())
      a = a.elements.size() > 1 ? a.elements[1] : a.elements[0];
    out += avg + labels(style, map, e) + " " + number(a).value_or("0") + "\n";
  }
}

void hist_family(std::string &out, const PrintedMap &map,
                 const std::string &stem, const Style &style) {
  family(out, stem, "histogram", map, style);
  for (const auto &e : map.entries) {
    if (!e.hist)
      continue;
    const Histogram &h = *e.hist;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); i++) {
      cumulative += h.counts[i];
      if (i < h.labels.size())
        out += stem + "_bucket" +
               labels(style, map, e, "le=\"" + bucket_max(h.labels[i]) + "\"") +
               " " + std::to_string(cumulative) + "\n";
    }
    out += stem + "_bucket" + labels(style, map, e, "le=\"+Inf\"") + " " +
           std::to_string(cumulative) + "\n";
    out += stem + "_count" + labels(style, map, e) + " " +
           std::to_string(cumulative) + "\n";
  }
}

} // namespace

std::string prometheus_name(const std::string &map_name,
                            const std::string &prefix) {
  std::string base = map_name.starts_with("@") ? map_name.substr(1) : map_name;
  if (base.empty())
    base = "map";
  std::string out = prefix;
  for (char c : base)
    out += name_char(c, false) ? c : '_';
  // A name cannot start with a digit: "_9lives", not "9lives".
  if (!name_char(out[0], true))
    out = "_" + out;
  return out;
}

std::string prometheus_escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string prometheus_text(const std::vector<const PrintedMap *> &maps,
                            Exposition dialect, const FormatContext *ctx,
                            const std::string &prefix) {
  const Style style{dialect, ctx};
  std::string out;
  std::set<std::string> stems;
  for (const PrintedMap *map : maps) {
    if (map->entries.empty())
      continue;
    // @ and @map sanitise alike: a second family of one name would make
    // the whole exposition invalid, so the later one is numbered.
    std::string stem = prometheus_name(map->name, prefix);
    for (int n = 2; !stems.insert(stem).second; n++)
      stem = prometheus_name(map->name, prefix) + "_" + std::to_string(n);
    switch (map->shape) {
    case PrintedMap::Shape::Plain:
      plain_family(out, *map, stem, style);
      break;
    case PrintedMap::Shape::Stats:
      stats_family(out, *map, stem, style);
      break;
    case PrintedMap::Shape::Hist:
      hist_family(out, *map, stem, style);
      break;
    case PrintedMap::Shape::TSeries:
      break; // a series of past intervals is no current value
    }
  }
  if (dialect == Exposition::OpenMetrics)
    out += "# EOF\n";
  return out;
}

void PrometheusOutput::map(const PrintedMap &map) {
  if (to_file()) {
    SnapshotOutput::map(map);
    return;
  }
  out() << prometheus_text({&map}, Exposition::Text, ctx_);
}

void PrometheusOutput::end() {
  // Without a file each print was written as it came.
  if (to_file())
    SnapshotOutput::end();
  else
    out().flush();
}

} // namespace ubtrace::output
