// Arrays: fixed indexes, nothing to insert or delete.
#include "runtime/maps/map_reader.h"
#include "tests/unit/maps/test_support.h"

namespace ubtrace::runtime::maps {
namespace {

using test::make_region;

TEST(MapsArrayMap, EveryIndexExistsAndStartsZeroed) {
  Region region = make_region({{MapKind::Array, 0, 16, 8}});
  void *map = region.map(0);
  for (uint32_t i = 0; i < 8; ++i) {
    auto *value = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &i));
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(value[0], 0u);
    EXPECT_EQ(value[1], 0u);
  }
  const uint32_t past = 8;
  EXPECT_EQ(ubt_bpf_map_lookup_elem(map, &past), nullptr);
  EXPECT_EQ(map_counters(map).entries, 8u);
}

TEST(MapsArrayMap, UpdateFlagsAndDelete) {
  Region region = make_region({{MapKind::Array, 0, 8, 4}});
  void *map = region.map(0);
  const uint32_t index = 2, past = 4;
  const uint64_t value = 77;
  EXPECT_EQ(ubt_bpf_map_update_elem(map, &index, &value, 1), -EEXIST);
  EXPECT_EQ(ubt_bpf_map_update_elem(map, &index, &value, 2), 0);
  EXPECT_EQ(ubt_bpf_map_update_elem(map, &past, &value, 0), -E2BIG);
  EXPECT_EQ(ubt_bpf_map_update_elem(map, &index, &value, 9), -EINVAL);
  EXPECT_EQ(*static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &index)),
            77u);
  EXPECT_EQ(ubt_bpf_map_delete_elem(map, &index), -EINVAL);

  clear_map(map); // arrays: zeroes
  EXPECT_EQ(*static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &index)), 0u);
}

long sum_array(void *, void *key, void *value, void *context) {
  auto *sum = static_cast<uint64_t *>(context);
  *sum +=
      *static_cast<uint32_t *>(key) * 1000 + *static_cast<uint64_t *>(value);
  return 0;
}

TEST(MapsArrayMap, IterationVisitsIndexesInOrder) {
  Region region = make_region({{MapKind::Array, 0, 8, 5}});
  void *map = region.map(0);
  for (uint32_t i = 0; i < 5; ++i) {
    const uint64_t value = i + 1;
    ASSERT_EQ(ubt_bpf_map_update_elem(map, &i, &value, 0), 0);
  }
  uint64_t sum = 0;
  EXPECT_EQ(ubt_map_iterate(map, sum_array, &sum), 5);
  EXPECT_EQ(sum, (0 + 1 + 2 + 3 + 4) * 1000u + 15u);
  const MapSnapshot snap = snapshot(map);
  ASSERT_EQ(snap.entries, 5u);
  for (size_t i = 0; i < 5; ++i) {
    uint32_t key;
    uint64_t value;
    std::memcpy(&key, snap.key(i).data(), 4);
    std::memcpy(&value, snap.value(i, 0).data(), 8);
    EXPECT_EQ(key, i);
    EXPECT_EQ(value, i + 1);
  }
}

} // namespace
} // namespace ubtrace::runtime::maps
