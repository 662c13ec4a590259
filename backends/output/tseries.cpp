#include "backends/output/tseries.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <ctime>
#include <limits>

namespace ubtrace::output {
namespace {

using runtime::TSeriesAgg;
constexpr size_t kBucket = sizeof(runtime::TSeriesBucket);

struct Bucket {
  uint64_t value = 0, meta = 0, epoch = 0;
};

Bucket bucket_at(Bytes slot, size_t i) {
  return {load_u64(slot, i * kBucket), load_u64(slot, i * kBucket + 8),
          load_u64(slot, i * kBucket + 16)};
}

// Numbers compare and print as the values' signedness says.
struct Number {
  uint64_t bits = 0;
  bool is_signed = true;
  bool operator<(const Number &o) const {
    return is_signed ? static_cast<int64_t>(bits) < static_cast<int64_t>(o.bits)
                     : bits < o.bits;
  }
  bool operator==(const Number &o) const { return bits == o.bits; }
  // this - other, as bpftrace measures distances on the graph
  int64_t minus(const Number &o) const {
    return static_cast<int64_t>(bits) - static_cast<int64_t>(o.bits);
  }
  std::string text() const {
    return is_signed ? std::to_string(static_cast<int64_t>(bits))
                     : std::to_string(bits);
  }
};

std::string pad_left(const std::string &s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string pad_right(const std::string &s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// The precision of the times printed: whole seconds, or as many fraction
// digits as the interval needs.
struct TimeUnit {
  int digits;       // 0, 3, 6 or 9
  const char *name; // for the header: "", "ms", "μs", "ns"
};

TimeUnit unit_for(uint64_t interval_ns) {
  if (interval_ns >= 1000000000ull)
    return {0, ""};
  if (interval_ns >= 1000000ull)
    return {3, "ms"};
  if (interval_ns >= 1000ull)
    return {6, "μs"};
  return {9, "ns"};
}

std::string local_time(uint64_t ns, const TimeUnit &unit) {
  time_t secs = static_cast<time_t>(ns / 1000000000ull);
  tm parts{};
  localtime_r(&secs, &parts);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%H:%M:%S", &parts);
  std::string out(buf, n);
  if (unit.digits) {
    uint64_t frac = ns % 1000000000ull;
    for (int i = unit.digits; i < 9; i++)
      frac /= 10;
    std::string digits = std::to_string(frac);
    out += "." + std::string(unit.digits - digits.size(), '0') + digits;
  }
  return out;
}

} // namespace

std::vector<uint8_t> merge_tseries(const runtime::MapSpec &spec, Bytes slots,
                                   size_t nslots) {
  const size_t size = spec.value_size;
  const size_t count = size / kBucket;
  const bool sig = spec.value.is_signed;
  std::vector<uint8_t> out(size, 0);
  for (size_t b = 0; b < count; b++) {
    uint64_t latest = 0;
    bool touched = false;
    for (size_t s = 0; s < nslots; s++) {
      Bucket k = bucket_at(slice(slots, s * size, size), b);
      latest = std::max(latest, k.epoch);
      touched |= k.value || k.meta;
    }
    Bucket merged;
    if (latest == 0) {
      // Written in interval 0 only (or never): see tseries_intervals.
      merged.meta = touched ? 1 : 0;
    } else {
      merged.epoch = latest;
      bool first = true;
      for (size_t s = 0; s < nslots; s++) {
        Bucket k = bucket_at(slice(slots, s * size, size), b);
        if (k.epoch != latest)
          continue;
        if (first) {
          merged.value = k.value;
          merged.meta = k.meta;
          first = false;
          continue;
        }
        Number a{merged.value, sig}, v{k.value, sig};
        switch (spec.tseries_agg) {
        case TSeriesAgg::Last:
          if (k.meta > merged.meta) {
            merged.value = k.value;
            merged.meta = k.meta;
          }
          break;
        case TSeriesAgg::Avg:
          merged.value += k.value;
          merged.meta += k.meta;
          break;
        case TSeriesAgg::Sum:
          merged.value += k.value;
          break;
        case TSeriesAgg::Min:
          if (v < a)
            merged.value = k.value;
          break;
        case TSeriesAgg::Max:
          if (a < v)
            merged.value = k.value;
          break;
        }
      }
    }
    std::memcpy(out.data() + b * kBucket, &merged.value, 8);
    std::memcpy(out.data() + b * kBucket + 8, &merged.meta, 8);
    std::memcpy(out.data() + b * kBucket + 16, &merged.epoch, 8);
  }
  return out;
}

std::map<uint64_t, uint64_t> tseries_intervals(const runtime::MapSpec &spec,
                                               Bytes merged) {
  std::map<uint64_t, uint64_t> out;
  const size_t count = merged.size() / kBucket;
  for (size_t b = 0; b < count; b++) {
    Bucket k = bucket_at(merged, b);
    if (k.epoch == 0) {
      if (k.value || k.meta)
        out.emplace(0, 0);
      continue;
    }
    uint64_t v = k.value;
    // meta is a count the traced process wrote: one past INT64_MAX is no
    // count (and as -1 would make INT64_MIN / -1 trap), so it divides
    // nothing.
    if (spec.tseries_agg == TSeriesAgg::Avg && k.meta &&
        k.meta <= static_cast<uint64_t>(INT64_MAX))
      v = spec.value.is_signed
              ? static_cast<uint64_t>(static_cast<int64_t>(k.value) /
                                      static_cast<int64_t>(k.meta))
              : k.value / k.meta;
    out[k.epoch] = v;
  }
  return out;
}

uint64_t tseries_last(const std::map<uint64_t, uint64_t> &intervals) {
  return intervals.empty() ? 0 : intervals.rbegin()->first;
}

TimeSeries build_tseries(const runtime::MapSpec &spec,
                         const std::map<uint64_t, uint64_t> &intervals,
                         uint64_t last) {
  TimeSeries ts;
  ts.interval_ns = spec.tseries_interval_ns;
  ts.is_signed = spec.value.is_signed;
  const uint64_t n = std::max<uint64_t>(spec.tseries_intervals, 1);
  // (Interval numbers come from the traced process's memory: any value,
  // 2^64-1 included, must give at most n points.)
  const uint64_t first = last >= n - 1 ? last - (n - 1) : 0;
  // The key's points start at its first value inside the window.
  uint64_t start = last;
  for (const auto &[epoch, v] : intervals)
    if (epoch >= first)
      start = std::min(start, epoch);
  for (uint64_t e = start;; e++) {
    auto it = intervals.find(e);
    std::optional<uint64_t> v;
    if (it != intervals.end())
      v = it->second;
    ts.points.emplace_back(e * ts.interval_ns, v);
    if (e == last)
      break;
  }
  return ts;
}

std::string tseries_text(const TimeSeries &ts) {
  constexpr int kWidth = 53;   // the graph, its two '|' included
  constexpr size_t kLeft = 21; // columns the smallest value takes
  std::vector<Number> values;
  for (const auto &p : ts.points)
    if (p.second)
      values.push_back({*p.second, ts.is_signed});
  if (values.empty())
    return "<no data>";
  Number lo = *std::min_element(values.begin(), values.end());
  Number hi = *std::max_element(values.begin(), values.end());
  if (lo == hi) {
    // Room on both sides of a flat line, where the type allows.
    if (ts.is_signed ? static_cast<int64_t>(lo.bits) >
                           std::numeric_limits<int64_t>::min()
                     : lo.bits > 0)
      lo.bits--;
    if (ts.is_signed ? static_cast<int64_t>(hi.bits) <
                           std::numeric_limits<int64_t>::max()
                     : hi.bits < std::numeric_limits<uint64_t>::max())
      hi.bits++;
  }
  const uint64_t span = ts.points.back().first - ts.points.front().first;
  const uint64_t step =
      span / (ts.points.size() > 1 ? ts.points.size() - 1 : 1);
  const TimeUnit unit = unit_for(step);
  std::string time_header = "hh:mm:ss";
  size_t time_width = time_header.size();
  if (unit.digits) {
    time_header += std::string(".") + unit.name;
    time_width += 1 + unit.digits;
  }
  const std::string scale =
      pad_left(lo.text(), kLeft) + pad_right(hi.text(), kWidth - kLeft) + "\n";
  std::string out = std::string(time_width + 1, ' ') + scale;
  out += pad_left(time_header, time_width + 1) + "|" +
         std::string(kWidth - 2, '_') + "|\n";
  int zero_at = 0;
  if (lo.minus({0, true}) < 0 && Number{0, true}.minus(hi) < 0)
    zero_at = static_cast<int>(static_cast<float>(kWidth) *
                               static_cast<float>(lo.minus({0, true})) /
                               static_cast<float>(lo.minus(hi)));
  for (const auto &[start, value] : ts.points) {
    std::string line(kWidth, ' ');
    line.front() = '|';
    line.back() = '|';
    if (zero_at > 0)
      line[zero_at] = '.';
    out += local_time(start, unit) + " ";
    if (!value) {
      out += line + " -\n";
      continue;
    }
    Number v{*value, ts.is_signed};
    int at = static_cast<int>(static_cast<float>(kWidth - 1) *
                              static_cast<float>(v.minus(lo)) /
                              static_cast<float>(hi.minus(lo)));
    line[std::clamp(at, 0, kWidth - 1)] = '*';
    out += line + " " + v.text() + "\n";
  }
  std::string bottom(kWidth, '_');
  bottom.front() = bottom.back() = 'v';
  out += std::string(time_width, ' ') + " " + bottom + "\n";
  out += std::string(time_width, ' ') + " " + scale;
  return out;
}

std::string tseries_json(const TimeSeries &ts) {
  std::string out = "[";
  bool first = true;
  for (const auto &[start, value] : ts.points) {
    if (!value)
      continue;
    time_t secs = static_cast<time_t>(start / 1000000000ull);
    tm parts{};
    gmtime_r(&secs, &parts);
    char when[64];
    size_t n = std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &parts);
    std::string frac = std::to_string(start % 1000000000ull);
    frac = std::string(9 - frac.size(), '0') + frac;
    out += first ? "" : ", ";
    first = false;
    out += "{\"interval_start\": \"" + std::string(when, n) + "." + frac +
           "\", \"value\": " + Number{*value, ts.is_signed}.text() + "}";
  }
  return out + "]";
}

} // namespace ubtrace::output
