#include "backends/output/merge.h"

#include "backends/output/tseries.h"

#include <cstring>

namespace ubtrace::output {
namespace {

void store_u64(std::vector<uint8_t> &out, size_t offset, uint64_t v) {
  if (offset + 8 <= out.size())
    std::memcpy(out.data() + offset, &v, 8);
}

Bytes slot(Bytes slots, size_t size, size_t i) {
  return slice(slots, i * size, size);
}

std::vector<uint8_t> sum_words(Bytes slots, size_t size, size_t nslots) {
  std::vector<uint8_t> out(size, 0);
  for (size_t w = 0; w + 8 <= size; w += 8) {
    uint64_t sum = 0;
    for (size_t i = 0; i < nslots; ++i)
      sum += load_u64(slot(slots, size, i), w);
    store_u64(out, w, sum);
  }
  return out;
}

std::vector<uint8_t> min_max(Bytes slots, size_t size, size_t nslots,
                             bool is_max, bool is_signed) {
  std::vector<uint8_t> out(std::max<size_t>(size, 16), 0);
  bool set = false;
  uint64_t best = 0;
  for (size_t i = 0; i < nslots; ++i) {
    Bytes s = slot(slots, size, i);
    if (load_u64(s, 8) == 0)
      continue;
    uint64_t v = load_u64(s, 0);
    bool better;
    if (is_signed)
      better = is_max ? static_cast<int64_t>(v) > static_cast<int64_t>(best)
                      : static_cast<int64_t>(v) < static_cast<int64_t>(best);
    else
      better = is_max ? v > best : v < best;
    if (!set || better)
      best = v;
    set = true;
  }
  store_u64(out, 0, best);
  store_u64(out, 8, set ? 1 : 0);
  out.resize(size);
  return out;
}

} // namespace

std::vector<uint8_t> merge_slots(const runtime::MapSpec &spec, Bytes slots,
                                 size_t nslots) {
  const size_t size = spec.value_size;
  switch (spec.agg) {
  case runtime::AggKind::None: {
    Bytes first = slot(slots, size, 0);
    std::vector<uint8_t> out(first.begin(), first.end());
    out.resize(size, 0);
    return out;
  }
  case runtime::AggKind::Count:
  case runtime::AggKind::Sum:
  case runtime::AggKind::Avg:
  case runtime::AggKind::Stats:
  case runtime::AggKind::Hist:
  case runtime::AggKind::LHist:
    return sum_words(slots, size, nslots);
  case runtime::AggKind::Min:
  case runtime::AggKind::Max:
    return min_max(slots, size, nslots, spec.agg == runtime::AggKind::Max,
                   spec.value.is_signed);
  case runtime::AggKind::TSeries:
    return merge_tseries(spec, slots, nslots);
  }
  return std::vector<uint8_t>(size, 0);
}

} // namespace ubtrace::output
