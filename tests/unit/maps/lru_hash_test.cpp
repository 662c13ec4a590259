// LRU hash maps evict instead of dropping, and spare entries in use.
#include "runtime/maps/map_reader.h"
#include "tests/unit/maps/test_support.h"

namespace ubtrace::runtime::maps {
namespace {

using test::lookup_u64;
using test::make_region;
using test::update_u64;

TEST(MapsLruHash, EvictsInsteadOfDropping) {
  Region region = make_region({{MapKind::LruHash, 8, 8, 32}});
  void *map = region.map(0);
  for (uint64_t k = 0; k < 100; ++k)
    ASSERT_EQ(update_u64(map, k, k), 0) << k;
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.entries, 32u);
  EXPECT_EQ(counters.drops, 0u);
  EXPECT_EQ(counters.evictions, 100u - 32u);
  EXPECT_EQ(snapshot(map).entries, 32u);
  // The newest key is always there.
  ASSERT_NE(lookup_u64(map, 99), nullptr);
  EXPECT_EQ(*lookup_u64(map, 99), 99u);
}

TEST(MapsLruHash, EntriesLookedUpSinceTheLastPassSurvive) {
  constexpr uint64_t kMax = 64;
  Region region = make_region({{MapKind::LruHash, 8, 8, kMax}});
  void *map = region.map(0);
  for (uint64_t k = 0; k < kMax; ++k)
    ASSERT_EQ(update_u64(map, k, k), 0);
  // One more insert sends the clock round once (it clears the marks).
  ASSERT_EQ(update_u64(map, 1000, 0), 0);
  // Use the upper half.
  for (uint64_t k = kMax / 2; k < kMax; ++k)
    ASSERT_NE(lookup_u64(map, k), nullptr) << k;
  for (uint64_t k = 2000; k < 2000 + kMax / 4; ++k)
    ASSERT_EQ(update_u64(map, k, k), 0);
  for (uint64_t k = kMax / 2; k < kMax; ++k)
    EXPECT_NE(lookup_u64(map, k), nullptr) << "recently used " << k;
  size_t old_survivors = 0;
  for (uint64_t k = 0; k < kMax / 2; ++k)
    old_survivors += lookup_u64(map, k) != nullptr;
  EXPECT_LT(old_survivors, kMax / 2);
}

TEST(MapsLruHash, PerSlotVariantEvictsAndZeroesReusedEntries) {
  Region region =
      make_region({{MapKind::PerCpuLruHash, 8, 8, 4}}, {.thread_slots = 4});
  void *map = region.map(0);
  for (uint64_t k = 0; k < 4; ++k)
    ASSERT_EQ(update_u64(map, k, 7), 0);
  ASSERT_EQ(update_u64(map, 10, 1), 0);
  EXPECT_EQ(map_counters(map).evictions, 1u);
  const MapSnapshot snap = snapshot(map);
  EXPECT_EQ(snap.entries, 4u);
  for (size_t i = 0; i < snap.entries; ++i) {
    uint64_t key, value;
    std::memcpy(&key, snap.key(i).data(), 8);
    std::memcpy(&value, snap.value(i, 0).data(), 8);
    EXPECT_EQ(value, key == 10 ? 1u : 7u);
  }
}

} // namespace
} // namespace ubtrace::runtime::maps
