#include "backends/output/json_output.h"

#include "backends/output/json_value.h"
#include "backends/output/text_output.h"

#include <algorithm>
#include <cstring>

namespace ubtrace::output {
namespace {

std::string_view type_of(PrintedMap::Shape shape) {
  switch (shape) {
  case PrintedMap::Shape::Plain:
    return "map";
  case PrintedMap::Shape::Stats:
    return "stats";
  case PrintedMap::Shape::Hist:
    return "hist";
  case PrintedMap::Shape::TSeries:
    return "tseries";
  }
  return "map";
}

std::string entry_json(const PrintedMap::Entry &e) {
  if (e.series)
    return tseries_json(*e.series);
  return e.hist ? hist_json(*e.hist) : json_of(e.value);
}

// Keys become strings: the text form, a tuple without its parentheses, and
// with every space removed (unlike text output).
std::string key_json(const Value &key) {
  std::string s = key_text(key);
  std::erase(s, ' ');
  return json_string(s);
}

std::string message(std::string_view type, std::string_view data_json) {
  std::string line = "{\"type\": \"";
  line += type;
  line += "\", \"data\": ";
  line += data_json;
  line += "}\n";
  return line;
}

void write_location(std::ostream &out, std::span<const SourceLocation> chain) {
  // Only the outermost location, as bpftrace does.
  SourceLocation none;
  const SourceLocation &loc = chain.empty() ? none : chain[0];
  out << ", \"filename\": " << json_string(loc.filename)
      << ", \"line\": " << json_uint(loc.line)
      << ", \"col\": " << json_uint(loc.column) << "}\n";
}

} // namespace

std::string map_json(const PrintedMap &map) {
  // Empty maps print nothing, except avg/stats maps: bpftrace wraps those
  // before checking, so they print an empty object.
  if (map.entries.empty() && map.shape != PrintedMap::Shape::Stats)
    return "";
  std::string data = "{" + json_string(map.name) + ": ";
  if (map.scalar && !map.entries.empty()) {
    data += entry_json(map.entries[0]);
  } else {
    data += "{";
    for (size_t i = 0; i < map.entries.size(); ++i) {
      if (i)
        data += ", ";
      data += key_json(map.entries[i].key) + ": " + entry_json(map.entries[i]);
    }
    data += "}";
  }
  data += "}";
  std::string line = message(type_of(map.shape), data);
  line.pop_back();
  return line;
}

void JsonOutput::map(const PrintedMap &map) {
  std::string line = map_json(map);
  if (!line.empty())
    out_ << line << '\n';
  out_.flush();
}

void JsonOutput::value(const Value &value) {
  out_ << message("value", json_of(value));
}

void JsonOutput::printf(std::string_view text) {
  out_ << message("printf", json_string(text));
}

void JsonOutput::diagnostic(Severity severity, std::string_view msg,
                            std::span<const SourceLocation> chain) {
  out_ << "{\"type\": \"" << (severity == Severity::Error ? "errorf" : "warnf")
       << "\", \"msg\": " << json_string(msg);
  write_location(out_, chain);
}

void JsonOutput::time(std::string_view text) {
  out_ << message("time", json_string(text));
}

void JsonOutput::cat(std::string_view text) {
  out_ << message("cat", json_string(text));
}

void JsonOutput::join(std::string_view text) {
  out_ << message("join", json_string(text));
}

void JsonOutput::syscall(std::string_view text) {
  out_ << message("syscall", json_string(text));
}

void JsonOutput::lost_events(uint64_t lost) {
  out_ << "{\"type\": \"lost_events\", \"count\": " << lost
       << ", \"data\": {\"events\": " << lost << "}}\n";
}

void JsonOutput::lost_hits(const LostHits &lost) {
  out_ << message("lost_hits", "{\"count\": " + json_uint(lost.count) +
                                   ", \"reason\": " + json_string(lost.reason) +
                                   ", \"msg\": " + json_string(lost.message) +
                                   "}");
}

void JsonOutput::process_exit(const ProcessExit &exit) {
  auto number = [](const std::optional<int> &v) {
    return v ? json_int(*v) : std::string("null");
  };
  out_ << message(
      "process_exit",
      "{\"pid\": " + json_int(exit.pid) +
          ", \"comm\": " + json_string(exit.comm) + ", \"exit_code\": " +
          number(exit.exit_code) + ", \"signal\": " + number(exit.signal) +
          ", \"core_dumped\": " + (exit.core_dumped ? "true" : "false") +
          ", \"msg\": " + json_string(exit.message) + "}");
}

void JsonOutput::benchmark_result(const std::vector<std::string> &names,
                                  size_t index, uint64_t average_ns,
                                  uint64_t iters) {
  out_ << "{\"type\": \"benchmark_result\", \"data\": {"
       << json_string(names[index])
       << ": {\"average\": " << json_uint(average_ns)
       << ", \"iters\": " << json_uint(iters) << "}}}\n";
}

void JsonOutput::test_result(const std::vector<std::string> &names,
                             size_t index, uint64_t duration_ns,
                             const std::vector<bool> &passed,
                             const std::string &output) {
  out_ << "{\"type\": \"test_result\", \"data\": {" << json_string(names[index])
       << ": {\"duration\": " << json_uint(duration_ns)
       << ", \"passed\": " << (passed[index] ? "true" : "false")
       << ", \"output\": " << json_string(output) << "}}}\n";
}

void JsonOutput::attached_probes(uint64_t probes) {
  out_ << "{\"type\": \"attached_probes\", \"count\": " << probes
       << ", \"data\": {\"probes\": " << probes << "}}\n";
}

void JsonOutput::helper_error(std::string_view, std::string_view helper,
                              int retcode,
                              std::span<const SourceLocation> chain) {
  out_ << "{\"type\": \"helper_error\", \"msg\": "
       << json_string(std::strerror(-retcode))
       << ", \"helper\": " << json_string(helper)
       << ", \"retcode\": " << json_int(retcode);
  write_location(out_, chain);
}

void JsonOutput::runtime_error(std::string_view msg,
                               std::span<const SourceLocation> chain) {
  out_ << "{\"type\": \"runtime_error\", \"msg\": " << json_string(msg);
  write_location(out_, chain);
}

void JsonOutput::end() {}

} // namespace ubtrace::output
