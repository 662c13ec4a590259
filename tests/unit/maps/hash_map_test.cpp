// Hash map semantics through the helper entry points (single thread).
#include "runtime/maps/format.h"
#include "runtime/maps/map_reader.h"
#include "tests/unit/maps/test_support.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string>

namespace ubtrace::runtime::maps {
namespace {

using test::delete_u64;
using test::lookup_u64;
using test::make_region;
using test::update_u64;

constexpr uint64_t kAny = 0, kNoExist = 1, kExist = 2;

class MapsHashMapTest : public ::testing::Test {
protected:
  Region region_ = make_region({{MapKind::Hash, 8, 8, 16}});
  void *map_ = region_.map(0);
};

TEST_F(MapsHashMapTest, LookupOfMissingKeyIsNull) {
  EXPECT_EQ(lookup_u64(map_, 1), nullptr);
}

TEST_F(MapsHashMapTest, AnyInsertsThenOverwrites) {
  ASSERT_EQ(update_u64(map_, 5, 50, kAny), 0);
  ASSERT_NE(lookup_u64(map_, 5), nullptr);
  EXPECT_EQ(*lookup_u64(map_, 5), 50u);
  ASSERT_EQ(update_u64(map_, 5, 51, kAny), 0);
  EXPECT_EQ(*lookup_u64(map_, 5), 51u);
  EXPECT_EQ(map_counters(map_).entries, 1u);
}

TEST_F(MapsHashMapTest, NoExistAndExistFlags) {
  EXPECT_EQ(update_u64(map_, 7, 1, kExist), -ENOENT);
  EXPECT_EQ(lookup_u64(map_, 7), nullptr);
  EXPECT_EQ(update_u64(map_, 7, 1, kNoExist), 0);
  EXPECT_EQ(update_u64(map_, 7, 2, kNoExist), -EEXIST);
  EXPECT_EQ(*lookup_u64(map_, 7), 1u);
  EXPECT_EQ(update_u64(map_, 7, 3, kExist), 0);
  EXPECT_EQ(*lookup_u64(map_, 7), 3u);
  EXPECT_EQ(update_u64(map_, 7, 3, 3), -EINVAL);
  EXPECT_EQ(update_u64(map_, 7, 3, 4), -EINVAL); // BPF_F_LOCK: unsupported
}

TEST_F(MapsHashMapTest, DeleteRemovesOnce) {
  ASSERT_EQ(update_u64(map_, 9, 90), 0);
  EXPECT_EQ(delete_u64(map_, 9), 0);
  EXPECT_EQ(lookup_u64(map_, 9), nullptr);
  EXPECT_EQ(delete_u64(map_, 9), -ENOENT);
  EXPECT_EQ(map_counters(map_).entries, 0u);
  ASSERT_EQ(update_u64(map_, 9, 91, kNoExist), 0);
  EXPECT_EQ(*lookup_u64(map_, 9), 91u);
}

TEST_F(MapsHashMapTest, FullMapDropsAndCountsEachDrop) {
  for (uint64_t k = 0; k < 16; ++k)
    ASSERT_EQ(update_u64(map_, k, k * 10), 0) << k;
  EXPECT_EQ(update_u64(map_, 100, 1), -E2BIG);
  EXPECT_EQ(update_u64(map_, 101, 1), -E2BIG);
  EXPECT_EQ(map_counters(map_).drops, 2u);
  EXPECT_EQ(lookup_u64(map_, 100), nullptr);
  // Existing keys still update when full.
  EXPECT_EQ(update_u64(map_, 3, 33), 0);
  EXPECT_EQ(map_counters(map_).drops, 2u);
  // A delete makes room.
  ASSERT_EQ(delete_u64(map_, 0), 0);
  EXPECT_EQ(update_u64(map_, 100, 1), 0);
  EXPECT_EQ(map_counters(map_).entries, 16u);
  for (uint64_t k = 1; k < 16; ++k)
    EXPECT_EQ(*lookup_u64(map_, k), k == 3 ? 33u : k * 10);
}

TEST(MapsHashMap, KeysOfEverySizeCompareAllTheirBytes) {
  for (uint32_t key_size : {1u, 4u, 12u, 16u, 64u, 100u}) {
    Region region = make_region({{MapKind::Hash, key_size, 8, 64}});
    void *map = region.map(0);
    // Keys that differ only in their last byte, and a zero key.
    std::vector<std::vector<uint8_t>> keys;
    for (int i = 0; i < 20; ++i) {
      std::vector<uint8_t> key(key_size, 0xab);
      key.back() = static_cast<uint8_t>(i + 1);
      keys.push_back(key);
    }
    keys.push_back(std::vector<uint8_t>(key_size, 0));
    for (size_t i = 0; i < keys.size(); ++i) {
      uint64_t value = i + 1000;
      ASSERT_EQ(ubt_bpf_map_update_elem(map, keys[i].data(), &value, 1), 0)
          << key_size << " " << i;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      // From an unaligned copy: keys come from the BPF stack.
      std::vector<uint8_t> buffer(key_size + 1);
      std::memcpy(buffer.data() + 1, keys[i].data(), key_size);
      auto *value = static_cast<uint64_t *>(
          ubt_bpf_map_lookup_elem(map, buffer.data() + 1));
      ASSERT_NE(value, nullptr) << key_size << " " << i;
      EXPECT_EQ(*value, i + 1000);
    }
    EXPECT_EQ(map_counters(map).entries, keys.size());
  }
}

TEST(MapsHashMap, ValuesOfOddSizesKeepTheirBytes) {
  Region region = make_region({{MapKind::Hash, 8, 13, 8}});
  void *map = region.map(0);
  const uint64_t key = 1;
  const char value[13] = "hello, maps!";
  ASSERT_EQ(ubt_bpf_map_update_elem(map, &key, value, 0), 0);
  auto *stored = static_cast<char *>(ubt_bpf_map_lookup_elem(map, &key));
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(std::memcmp(stored, value, 13), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(stored) % 8, 0u);
}

// Insert/delete churn over many distinct keys: tombstones must neither break
// lookups nor eat the free space.
TEST(MapsHashMap, ChurnOfDistinctKeysKeepsWorking) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  void *map = region.map(0);
  std::map<uint64_t, uint64_t> model;
  uint64_t next_key = 1;
  uint64_t seed = 12345;
  for (int step = 0; step < 200000; ++step) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const bool insert = model.size() < 32 || (seed >> 60) < 8;
    if (insert && model.size() < 64) {
      const uint64_t key = next_key++;
      ASSERT_EQ(update_u64(map, key, key * 3, 1), 0) << step;
      model[key] = key * 3;
    } else {
      auto victim = model.begin();
      std::advance(victim, (seed >> 20) % model.size());
      ASSERT_EQ(delete_u64(map, victim->first), 0) << step;
      model.erase(victim);
    }
    if (step % 1000 == 0) {
      EXPECT_EQ(map_counters(map).entries, model.size());
      EXPECT_EQ(lookup_u64(map, next_key + 1000), nullptr);
    }
  }
  for (const auto &[key, value] : model) {
    uint64_t *found = lookup_u64(map, key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, value);
  }
  // Tombstones left behind have not stolen room: the map fills to the brim.
  for (uint64_t key = 1ull << 40; model.size() < 64; ++key) {
    ASSERT_EQ(update_u64(map, key, 0, 1), 0);
    model[key] = 0;
  }
  EXPECT_EQ(update_u64(map, 1ull << 50, 0, 1), -E2BIG);
  const auto *header = static_cast<const MapHeader *>(map);
  EXPECT_LT(header->tombstones.load(), header->bucket_mask + 1);
}

struct Visit {
  std::vector<uint64_t> keys;
  uint64_t value_sum = 0;
  size_t stop_after = SIZE_MAX;
};

long visit_elem(void *, void *key, void *value, void *context) {
  auto *visit = static_cast<Visit *>(context);
  visit->keys.push_back(*static_cast<uint64_t *>(key));
  visit->value_sum += *static_cast<uint64_t *>(value);
  return visit->keys.size() >= visit->stop_after ? 1 : 0;
}

TEST_F(MapsHashMapTest, IterateVisitsEveryElementAndStopsOnRequest) {
  for (uint64_t k = 1; k <= 10; ++k)
    ASSERT_EQ(update_u64(map_, k, k), 0);
  ASSERT_EQ(delete_u64(map_, 4), 0);
  Visit all;
  EXPECT_EQ(ubt_map_iterate(map_, visit_elem, &all), 9);
  std::sort(all.keys.begin(), all.keys.end());
  EXPECT_EQ(all.keys, (std::vector<uint64_t>{1, 2, 3, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(all.value_sum, 55u - 4u);

  Visit some;
  some.stop_after = 3;
  EXPECT_EQ(ubt_bpf_for_each_map_elem(
                map_, reinterpret_cast<void *>(&visit_elem), &some, 0),
            3);
  EXPECT_EQ(some.keys.size(), 3u);
  EXPECT_EQ(ubt_bpf_for_each_map_elem(
                map_, reinterpret_cast<void *>(&visit_elem), &some, 1),
            -EINVAL);
}

TEST_F(MapsHashMapTest, SnapshotClearAndZero) {
  for (uint64_t k = 1; k <= 5; ++k)
    ASSERT_EQ(update_u64(map_, k, k * 100), 0);
  MapSnapshot snap = snapshot(map_);
  ASSERT_EQ(snap.entries, 5u);
  EXPECT_EQ(snap.info.slots, 1u);
  std::map<uint64_t, uint64_t> seen;
  for (size_t i = 0; i < snap.entries; ++i) {
    uint64_t key, value;
    std::memcpy(&key, snap.key(i).data(), 8);
    std::memcpy(&value, snap.value(i, 0).data(), 8);
    seen[key] = value;
  }
  EXPECT_EQ(seen, (std::map<uint64_t, uint64_t>{
                      {1, 100}, {2, 200}, {3, 300}, {4, 400}, {5, 500}}));

  std::vector<uint8_t> values;
  const uint64_t three = 3, six = 6;
  ASSERT_TRUE(read_entry(map_, &three, values));
  EXPECT_EQ(values.size(), 8u);
  EXPECT_FALSE(read_entry(map_, &six, values));

  zero_map(map_);
  EXPECT_EQ(snapshot(map_).entries, 5u);
  EXPECT_EQ(*lookup_u64(map_, 2), 0u);

  clear_map(map_);
  EXPECT_EQ(snapshot(map_).entries, 0u);
  EXPECT_EQ(map_counters(map_).entries, 0u);
  EXPECT_EQ(lookup_u64(map_, 2), nullptr);
  // All the room is back.
  for (uint64_t k = 100; k < 116; ++k)
    ASSERT_EQ(update_u64(map_, k, k), 0);
}

} // namespace
} // namespace ubtrace::runtime::maps
