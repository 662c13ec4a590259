#include "backends/output/printed_map.h"

#include "backends/output/decode.h"

#include <algorithm>
#include <cstring>

namespace ubtrace::output {
namespace {

using runtime::AggKind;
using Kind = runtime::ValueType::Kind;

int compare_bytes(Bytes a, Bytes b) {
  size_t n = std::min(a.size(), b.size());
  int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
  if (c != 0)
    return c;
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

template <class T> int three_way(T a, T b) {
  return a < b ? -1 : a > b;
}

bool is_integer_kind(Kind k) {
  return k == Kind::Integer || k == Kind::Enum;
}

int compare_field(const runtime::ValueType &type, Bytes a, Bytes b,
                  size_t offset) {
  if (is_integer_kind(type.kind))
    return three_way(load_signed(a, offset, type.size),
                     load_signed(b, offset, type.size));
  if (type.kind == Kind::String)
    return compare_bytes(slice(a, offset, type.size),
                         slice(b, offset, type.size));
  return 0;
}

// The number a value-sorted map orders by, as a comparable pair: signed
// values compare as int64, unsigned ones as uint64.
struct SortValue {
  bool is_signed = false;
  uint64_t bits = 0;
  bool operator<(const SortValue &o) const {
    return is_signed ? static_cast<int64_t>(bits) < static_cast<int64_t>(o.bits)
                     : bits < o.bits;
  }
};

uint64_t bucket_total(Bytes value) {
  uint64_t total = 0;
  for (size_t w = 0; w + 8 <= value.size(); w += 8)
    total += load_u64(value, w);
  return total;
}

template <class T> T average(Bytes value) {
  T total = static_cast<T>(load_u64(value, 0));
  T count = static_cast<T>(load_u64(value, 8));
  return count > 0 ? total / count : 0;
}

// Whether entries order by value, and by which number.
std::optional<SortValue> sort_value(const runtime::MapSpec &spec, Bytes v) {
  const bool sig = spec.value.is_signed;
  switch (spec.agg) {
  case AggKind::Count:
    return SortValue{false, load_u64(v, 0)};
  case AggKind::Sum:
    return SortValue{sig, load_u64(v, 0)};
  case AggKind::Min:
  case AggKind::Max:
    // bpftrace orders min/max maps by the value read as unsigned.
    return SortValue{false, load_u64(v, 8) ? load_u64(v, 0) : 0};
  case AggKind::Avg:
  case AggKind::Stats:
    if (sig)
      return SortValue{true, static_cast<uint64_t>(average<int64_t>(v))};
    return SortValue{false, average<uint64_t>(v)};
  case AggKind::Hist:
  case AggKind::LHist:
    return SortValue{false, bucket_total(v)};
  case AggKind::TSeries:
    return std::nullopt;
  case AggKind::None:
    if (is_integer_kind(spec.value.kind)) {
      if (sig)
        return SortValue{
            true, static_cast<uint64_t>(load_signed(v, 0, spec.value.size))};
      return SortValue{false, load_unsigned(v, 0, spec.value.size)};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

Value aggregate_value(const runtime::MapSpec &spec, Bytes v, uint32_t div,
                      const FormatContext &ctx) {
  const bool sig = spec.value.is_signed;
  const auto sdiv = static_cast<int64_t>(div);
  auto number = [&](uint64_t bits) {
    return sig ? Value::of_int(static_cast<int64_t>(bits) / sdiv)
               : Value::of_uint(bits / div);
  };
  switch (spec.agg) {
  case AggKind::Count:
    return Value::of_uint(load_u64(v, 0) / div);
  case AggKind::Sum:
    return number(load_u64(v, 0));
  case AggKind::Min:
  case AggKind::Max:
    return number(load_u64(v, 8) ? load_u64(v, 0) : 0);
  case AggKind::Avg:
    return sig ? Value::of_int(average<int64_t>(v) / sdiv)
               : Value::of_uint(average<uint64_t>(v) / div);
  case AggKind::Stats: {
    std::vector<std::string> names = {"count", "average", "total"};
    if (sig)
      return Value::of_record(std::move(names),
                              {Value::of_int(load_i64(v, 8)),
                               Value::of_int(average<int64_t>(v) / sdiv),
                               Value::of_int(load_i64(v, 0))});
    return Value::of_record(std::move(names),
                            {Value::of_uint(load_u64(v, 8)),
                             Value::of_uint(average<uint64_t>(v) / div),
                             Value::of_uint(load_u64(v, 0))});
  }
  case AggKind::Hist:
  case AggKind::LHist:
  case AggKind::TSeries:
    return Value::none(); // histograms and series are built separately
  case AggKind::None:
    return decode(spec.value, v, ctx, div);
  }
  return Value::none();
}

std::vector<uint64_t> buckets_of(Bytes v) {
  std::vector<uint64_t> b(v.size() / 8);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = load_u64(v, i * 8);
  return b;
}

PrintedMap::Shape shape_of(AggKind agg) {
  switch (agg) {
  case AggKind::Hist:
  case AggKind::LHist:
    return PrintedMap::Shape::Hist;
  case AggKind::TSeries:
    return PrintedMap::Shape::TSeries;
  case AggKind::Avg:
  case AggKind::Stats:
    return PrintedMap::Shape::Stats;
  case AggKind::None:
  case AggKind::Count:
  case AggKind::Sum:
  case AggKind::Min:
  case AggKind::Max:
    return PrintedMap::Shape::Plain;
  }
  return PrintedMap::Shape::Plain;
}

} // namespace

int compare_keys(const runtime::ValueType &key, Bytes a, Bytes b) {
  int c = 0;
  if (key.kind == Kind::Tuple) {
    for (const auto &f : key.fields)
      if ((c = compare_field(f.type, a, b, f.offset)) != 0)
        return c;
  } else if (is_integer_kind(key.kind)) {
    c = compare_field(key, a, b, 0);
  } else if (key.kind == Kind::String) {
    c = compare_bytes(a, b);
  }
  return c != 0 ? c : compare_bytes(a, b);
}

std::vector<const Value *> key_parts(const Value &key) {
  std::vector<const Value *> parts;
  if (key.kind == Value::Kind::Tuple || key.kind == Value::Kind::Record) {
    for (const auto &e : key.elements)
      parts.push_back(&e);
  } else if (key.kind != Value::Kind::None) {
    parts.push_back(&key);
  }
  return parts;
}

std::vector<std::string> key_part_names(const PrintedMap &map,
                                        const Value &key) {
  const size_t n = key_parts(key).size();
  const bool several =
      key.kind == Value::Kind::Tuple || key.kind == Value::Kind::Record;
  std::vector<std::string> names;
  for (size_t i = 0; i < n; i++) {
    if (i < map.labels.size())
      names.push_back(map.labels[i]);
    else if (key.kind == Value::Kind::Record && i < key.names.size() &&
             !key.names[i].empty())
      names.push_back(key.names[i]);
    else
      names.push_back(several ? "key" + std::to_string(i) : "key");
  }
  return names;
}

PrintedMap build_printed_map(const runtime::MapSpec &spec,
                             std::vector<MapEntry> entries,
                             const FormatContext &ctx, size_t top,
                             uint32_t div) {
  if (div == 0)
    div = 1;
  PrintedMap map;
  map.name = spec.name;
  map.shape = shape_of(spec.agg);
  map.agg = spec.agg;
  map.scalar = spec.key.kind == Kind::None;
  map.labels = spec.labels;
  map.help = spec.help;

  // Key order first, then (for value-sorted maps) by value with ties in
  // key order. Sorting positions keeps it stable without a temporary buffer.
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  const bool by_value = !entries.empty() && sort_value(spec, entries[0].value);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (by_value) {
      SortValue va = *sort_value(spec, entries[a].value);
      SortValue vb = *sort_value(spec, entries[b].value);
      if (va < vb || vb < va)
        return va < vb;
    }
    int c = compare_keys(spec.key, entries[a].key, entries[b].key);
    return c != 0 ? c < 0 : a < b;
  });

  // A tseries map's window ends at the last interval any key has a value
  // in: all keys print the same times.
  std::vector<std::map<uint64_t, uint64_t>> series;
  uint64_t last = 0;
  if (spec.agg == AggKind::TSeries)
    for (const MapEntry &e : entries) {
      series.push_back(tseries_intervals(spec, e.value));
      last = std::max(last, tseries_last(series.back()));
    }

  size_t skip = 0;
  if (top && entries.size() > top)
    skip = entries.size() - top;
  for (size_t i = skip; i < order.size(); ++i) {
    const MapEntry &e = entries[order[i]];
    PrintedMap::Entry out;
    if (!map.scalar)
      out.key = decode(spec.key, e.key, ctx);
    if (spec.agg == AggKind::Hist)
      out.hist = build_hist(buckets_of(e.value), spec.hist_bits, div);
    else if (spec.agg == AggKind::LHist)
      out.hist = build_lhist(buckets_of(e.value), spec.lhist_min,
                             spec.lhist_max, spec.lhist_step);
    else if (spec.agg == AggKind::TSeries)
      out.series = build_tseries(spec, series[order[i]], last);
    else
      out.value = aggregate_value(spec, e.value, div, ctx);
    if (spec.agg == AggKind::Avg || spec.agg == AggKind::Stats) {
      out.total = spec.value.is_signed ? Value::of_int(load_i64(e.value, 0))
                                       : Value::of_uint(load_u64(e.value, 0));
      out.count = load_u64(e.value, 8);
    }
    map.entries.push_back(std::move(out));
    // A scalar map prints its one value.
    if (map.scalar)
      break;
  }
  return map;
}

} // namespace ubtrace::output
