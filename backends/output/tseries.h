// tseries() values: the intervals a merged slot holds, the window of them a
// map prints, and the text graph and JSON bpftrace gives them.
#pragma once

#include "backends/output/bytes.h"
#include "runtime/bundle.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ubtrace::output {

// The intervals of one key: interval number (start / interval_ns) ->
// value, from a slot merge_slots() combined. An Avg bucket reads as its
// mean. A bucket used in interval 0 reads as 0 there: 0 is also the
// number of an unused bucket, so, as in bpftrace, its value is lost.
std::map<uint64_t, uint64_t> tseries_intervals(const runtime::MapSpec &spec,
                                               Bytes merged);

// The last interval any key of a map has a value in (0 if none).
uint64_t tseries_last(const std::map<uint64_t, uint64_t> &intervals);

struct TimeSeries {
  uint64_t interval_ns = 0;
  bool is_signed = true;
  // (interval start in ns since 1970, value), from the first interval of
  // the window this key has a value in to the window's end; no value where
  // the key had none in that interval.
  std::vector<std::pair<uint64_t, std::optional<uint64_t>>> points;
};

// The window [last - intervals + 1, last] of the map's intervals, for one
// key.
TimeSeries build_tseries(const runtime::MapSpec &spec,
                         const std::map<uint64_t, uint64_t> &intervals,
                         uint64_t last);

// The graph: a header with the smallest and largest values, one line per
// interval (its local start time, a '*' placed between them, the value or
// '-'), and the same scale below, each line ending in '\n'; "<no data>"
// (no newline) for none.
std::string tseries_text(const TimeSeries &ts);

// [{"interval_start": "1970-01-01 00:00:00.500000000", "value": 9}, ...]:
// UTC times, intervals without a value left out.
std::string tseries_json(const TimeSeries &ts);

// Combines the slots of one tseries() entry bucket by bucket (for
// merge_slots): the latest interval of each bucket wins, its slots'
// values combined as the aggregation says.
std::vector<uint8_t> merge_tseries(const runtime::MapSpec &spec, Bytes slots,
                                   size_t nslots);

} // namespace ubtrace::output
