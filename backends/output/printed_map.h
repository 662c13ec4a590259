// A map ready to print: its entries in bpftrace's order, keys and values
// decoded. Built from a MapSpec and the entries' key and merged value
// bytes; both printers consume it.
#pragma once

#include "backends/output/bytes.h"
#include "backends/output/context.h"
#include "backends/output/histogram.h"
#include "backends/output/tseries.h"
#include "backends/output/value.h"
#include "runtime/bundle.h"

#include <optional>
#include <string>
#include <vector>

namespace ubtrace::output {

// One stored entry: key bytes (empty for scalar maps) and the merged value
// (merge_slots) in the layout of one slot.
struct MapEntry {
  Bytes key;
  Bytes value;
};

struct PrintedMap {
  // What the JSON "type" says: "map", "stats" (avg/stats) or "hist"
  // (hist/lhist). Text prints histograms on lines of their own.
  enum class Shape : uint8_t { Plain, Stats, Hist, TSeries };

  struct Entry {
    Value key;                        // Kind::None for scalar maps
    Value value;                      // Plain and Stats shapes
    std::optional<Histogram> hist;    // Hist shape
    std::optional<TimeSeries> series; // TSeries shape
    // avg() and stats(): the sum and the number of values (Prometheus
    // exports them as a summary's _sum and _count).
    Value total;
    uint64_t count = 0;
  };

  std::string name;
  Shape shape = Shape::Plain;
  runtime::AggKind agg = runtime::AggKind::None;
  bool scalar = false;
  // A `// ubtrace:metric` annotation's label names and help (bundle.h).
  std::vector<std::string> labels;
  std::string help;
  std::vector<Entry> entries;
};

// The parts of a key: a tuple's or record's elements, else the key itself
// (none for a scalar map's).
std::vector<const Value *> key_parts(const Value &key);

// The names of key_parts(key), for labels: the map's annotated labels, a
// record's field names, key0..keyN for a tuple's parts, `key` for a key of
// one part.
std::vector<std::string> key_part_names(const PrintedMap &map,
                                        const Value &key);

// Orders the entries as bpftrace does and decodes them.
//   count, sum, min, max, plain integers: ascending by value
//   avg, stats: ascending by average
//   hist, lhist: ascending by the total count over all buckets
//   tseries: by key, every key's window ending at the map's last interval
//   anything else: by key (see compare_keys)
// Ties keep key order (bpftrace leaves them in hash-table order).
// `top` keeps only the last `top` entries (print(@m, top)); `div` divides
// the values (print(@m, top, div)); 0 means none for both.
PrintedMap build_printed_map(const runtime::MapSpec &spec,
                             std::vector<MapEntry> entries,
                             const FormatContext &ctx, size_t top = 0,
                             uint32_t div = 0);

// bpftrace's key order: integer keys as signed numbers of their width,
// string keys bytewise; tuple keys by their integer and string fields, first
// field first (other fields do not take part). Keys that compare equal
// (and keys of other types) fall back to bytewise order so that printing is
// deterministic. Returns <0, 0 or >0.
int compare_keys(const runtime::ValueType &key, Bytes a, Bytes b);

} // namespace ubtrace::output
