#include "backends/output/histogram.h"

#include "backends/output/json_value.h"
#include "backends/output/text_value.h"

#include <algorithm>
#include <cstdio>

namespace ubtrace::output {
namespace {

std::pair<int64_t, int64_t> nonempty_range(std::span<const uint64_t> b) {
  int64_t first = -1, last = -1;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] == 0)
      continue;
    if (first < 0)
      first = static_cast<int64_t>(i);
    last = static_cast<int64_t>(i);
  }
  return {first, last};
}

// The upper bound of hist bucket `index` (> 2 << bits): 2^bits buckets
// split each power of two, so with n = 2^bits the bucket starts at
// 2^power * (n + interval). The label is suffixed by the largest power of
// 1024 (K, M, G, T, P, E); its number saturates at 2^64 - 1.
Value hist_bucket_label(uint32_t index, uint32_t bits) {
  const uint32_t n = 1u << bits;
  const uint32_t interval = index & (n - 1);
  uint32_t power = (index >> bits) - 1;
  unsigned __int128 value =
      (static_cast<unsigned __int128>(1) << power) * (n + interval);
  uint64_t number =
      value > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(value);
  const uint32_t decade = power / 10;
  power -= 10 * decade;
  std::string label = std::to_string((uint64_t{1} << power) * (n + interval));
  if (decade > 0)
    label += "\0KMGTPE"[decade];
  return Value::of_symbolic(std::move(label), number);
}

Value hist_label(uint32_t index, uint32_t bits) {
  // Up to 2 << bits every bucket holds one value: the label is the index.
  if (index <= (2u << bits))
    return Value::of_int(index);
  return hist_bucket_label(index, bits);
}

// lhist labels take a K or M suffix only when the step is a multiple of
// 1024 (so every label of the histogram can).
Value lhist_label(int64_t number, int64_t step) {
  constexpr int64_t kilo = 1024, mega = 1024 * 1024;
  if (step % kilo != 0)
    return Value::of_int(number);
  std::string text;
  if (number == 0)
    text = "0";
  else if (number % mega == 0)
    text = std::to_string(number / mega) + "M";
  else if (number % kilo == 0)
    text = std::to_string(number / kilo) + "K";
  else
    text = std::to_string(number);
  return Value::of_signed_symbolic(std::move(text), number);
}

// Adjacent plain integers bound a single-value bucket, printed "[n]".
bool single_value(const Value &lo, const Value &hi) {
  if (lo.kind != hi.kind)
    return false;
  if (lo.kind == Value::Kind::Int)
    return lo.sint != INT64_MAX && lo.sint + 1 == hi.sint;
  if (lo.kind == Value::Kind::UInt)
    return lo.uint != UINT64_MAX && lo.uint + 1 == hi.uint;
  return false;
}

std::string bucket_header(const Histogram &h, size_t i) {
  if (i == 0) {
    if (!h.lower_bound)
      return "(..., " + text_of(h.labels[0]) + ")";
    if (h.labels.empty())
      return "[" + text_of(*h.lower_bound) + ", ...)";
    if (single_value(*h.lower_bound, h.labels[0]))
      return "[" + text_of(*h.lower_bound) + "]";
    return "[" + text_of(*h.lower_bound) + ", " + text_of(h.labels[0]) + ")";
  }
  if (i >= h.labels.size())
    return "[" + text_of(h.labels[i - 1]) + ", ...)";
  if (single_value(h.labels[i - 1], h.labels[i]))
    return "[" + text_of(h.labels[i - 1]) + "]";
  return "[" + text_of(h.labels[i - 1]) + ", " + text_of(h.labels[i]) + ")";
}

} // namespace

std::string bucket_max(const Value &label) {
  if (label.kind == Value::Kind::Int)
    return json_int(label.sint - 1);
  if (label.kind != Value::Kind::Symbolic)
    return json_of(label);
  if (label.signed_number)
    return json_int(label.sint - 1);
  if (label.uint == 0)
    return "-1";
  // A saturated label already is the largest value the bucket holds.
  if (label.uint == UINT64_MAX)
    return json_uint(UINT64_MAX);
  return json_uint(label.uint - 1);
}

Histogram build_hist(std::span<const uint64_t> buckets, uint32_t bits,
                     uint32_t div) {
  if (div == 0)
    div = 1;
  Histogram h;
  auto [first, last] = nonempty_range(buckets);
  if (first < 0)
    return h;
  if (first != 0)
    h.lower_bound = hist_label(static_cast<uint32_t>(first - 1), bits);
  for (int64_t i = first; i <= last; ++i) {
    h.labels.push_back(hist_label(static_cast<uint32_t>(i), bits));
    h.counts.push_back(buckets[i] / div);
  }
  return h;
}

Histogram build_lhist(std::span<const uint64_t> buckets, int64_t min,
                      int64_t max, int64_t step) {
  Histogram h;
  auto [first, last] = nonempty_range(buckets);
  if (first < 0 || step <= 0)
    return h;
  if (first != 0)
    h.lower_bound = lhist_label(min + (first - 1) * step, step);
  for (int64_t i = first; i <= last; ++i) {
    // The last bucket (at or above max) has no upper bound.
    if (min + i * step <= max)
      h.labels.push_back(lhist_label(min + i * step, step));
    h.counts.push_back(buckets[i]);
  }
  return h;
}

std::string hist_text(const Histogram &h) {
  constexpr int bar_columns = 52;
  uint64_t fullest = 0;
  for (uint64_t c : h.counts)
    fullest = std::max(fullest, c);
  std::string out;
  char count[32];
  for (size_t i = 0; i < h.counts.size(); ++i) {
    // bpftrace scales in single precision; keep its rounding.
    int bar = 0;
    if (fullest > 0)
      bar = static_cast<int>(
          (static_cast<float>(h.counts[i]) / static_cast<float>(fullest)) *
          static_cast<float>(bar_columns));
    std::string header = bucket_header(h, i);
    if (header.size() < 16)
      header.resize(16, ' ');
    std::snprintf(count, sizeof(count), "%8llu",
                  static_cast<unsigned long long>(h.counts[i]));
    std::string bars(static_cast<size_t>(bar), '@');
    bars.resize(std::max<size_t>(bars.size(), bar_columns), ' ');
    out += header;
    out += count;
    out += " |";
    out += bars;
    out += "|\n";
  }
  return out;
}

std::string hist_json(const Histogram &h) {
  std::string out = "[";
  for (size_t i = 0; i < h.counts.size(); ++i) {
    if (i)
      out += ",";
    out += "{";
    if (i == 0 && h.lower_bound)
      out += "\"min\": " + json_of(*h.lower_bound) + ", ";
    else if (i > 0)
      out += "\"min\": " + json_of(h.labels[i - 1]) + ", ";
    if (i < h.labels.size())
      out += "\"max\": " + bucket_max(h.labels[i]) + ", ";
    out += "\"count\": " + std::to_string(h.counts[i]) + "}";
  }
  out += "]";
  return out;
}

} // namespace ubtrace::output
