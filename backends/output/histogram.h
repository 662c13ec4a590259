// hist() and lhist() values: which buckets print, their labels, and the
// text and JSON forms bpftrace gives them.
#pragma once

#include "backends/output/value.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::output {

// The printed buckets, from the first non-empty one to the last. labels[i]
// is the (exclusive) upper bound of bucket i, whose lower bound is
// labels[i - 1], or lower_bound for the first bucket (none: unbounded
// below). A last bucket with no label has no upper bound. Labels are Int
// (plain numbers) or Symbolic (suffixed: "4K" is 4096).
struct Histogram {
  std::optional<Value> lower_bound;
  std::vector<Value> labels;
  std::vector<uint64_t> counts;
};

// hist(n, bits): buckets as bundle.h lays them out (hist_buckets(bits)):
// index 0 holds negative values, then 2^bits buckets per power of two.
// Counts are divided by `div` (print's third argument; 0 means 1).
Histogram build_hist(std::span<const uint64_t> buckets, uint32_t bits,
                     uint32_t div = 1);

// lhist(n, min, max, step): index 0 below min, one bucket per step, the last
// at or above max. print()'s div does not apply to lhist, as in bpftrace.
Histogram build_lhist(std::span<const uint64_t> buckets, int64_t min,
                      int64_t max, int64_t step);

// The bucket lines: a 16-column label, an 8-column count, " |", a bar of
// '@' scaled so the fullest bucket is 52 columns, "|".
std::string hist_text(const Histogram &h);

// [{"min": 0, "max": 0, "count": 1},...]: closed intervals; the first
// bucket has no "min" when unbounded below, the last no "max" when
// unbounded above.
std::string hist_json(const Histogram &h);

// The largest value a bucket holds (its label is the exclusive upper
// bound), as a number's text: JSON's "max", Prometheus's `le`.
std::string bucket_max(const Value &label);

} // namespace ubtrace::output
