#include "runtime/inject/region_placement.h"

#include <algorithm>

namespace ubtrace::runtime::inject {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kLowest = uint64_t{1} << 32;
constexpr uint64_t kHighest = uint64_t{0x7ff000000000}; // below 47-bit's top
constexpr uint64_t kDistance = uint64_t{1} << 30;

} // namespace

Result<uint64_t> place_region(const std::vector<MappedRegion> &maps,
                              uint64_t size, std::mt19937_64 &random) {
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (const MappedRegion &region : maps)
    used.emplace_back(region.start, region.end);
  std::sort(used.begin(), used.end());
  uint64_t best_start = 0, best_size = 0;
  uint64_t cursor = kLowest;
  auto consider = [&](uint64_t start, uint64_t end) {
    start = std::max(start, kLowest);
    end = std::min(end, kHighest);
    if (end > start && end - start > best_size) {
      best_start = start;
      best_size = end - start;
    }
  };
  for (auto [start, end] : used) {
    if (start > cursor)
      consider(cursor, start);
    cursor = std::max(cursor, end);
  }
  consider(cursor, kHighest);
  // Keep whole pages of distance on both sides.
  uint64_t distance = std::min(kDistance, best_size / 4) & ~(kPage - 1);
  if (best_size < size + 2 * distance || distance < 16 * kPage)
    return make_error("no room in its address space for " +
                      std::to_string(size) + " bytes");
  uint64_t span = (best_size - size - 2 * distance) / kPage;
  uint64_t page = span ? random() % (span + 1) : 0;
  return best_start + distance + page * kPage;
}

} // namespace ubtrace::runtime::inject
