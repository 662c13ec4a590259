// Many threads on the same maps at once, with the CLI reading and clearing.
#include "runtime/maps/format.h"
#include "runtime/maps/map_reader.h"
#include "tests/unit/maps/test_support.h"

#include <atomic>
#include <set>
#include <thread>

namespace ubtrace::runtime::maps {
namespace {

using test::count_event;
using test::delete_u64;
using test::lookup_u64;
using test::make_region;
using test::update_u64;

TEST(MapsConcurrency, RacingInsertsOfTheSameKeysNeverDuplicateAKey) {
  constexpr uint64_t kKeys = 2000;
  Region region = make_region({{MapKind::Hash, 8, 8, kKeys}});
  void *map = region.map(0);
  for (int round = 0; round < 10; ++round) {
    std::atomic<uint64_t> inserted{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        while (!go)
          std::this_thread::yield();
        for (uint64_t i = 0; i < kKeys; ++i) {
          // Half the threads walk the keys in the same order (they collide
          // on every key), the others from other starting points.
          const uint64_t key = t % 2 == 0 ? i : (i + t * 251) % kKeys;
          const long rc = update_u64(map, key, key * 3, 1);
          EXPECT_TRUE(rc == 0 || rc == -EEXIST) << rc;
          inserted += rc == 0;
        }
      });
    go = true;
    for (auto &t : threads)
      t.join();
    ASSERT_EQ(inserted.load(), kKeys) << "round " << round;
    ASSERT_EQ(map_counters(map).entries, kKeys);
    // Every published entry, duplicates included (snapshot() would hide
    // them).
    std::set<uint64_t> keys;
    size_t visited = 0;
    for_each_entry(map,
                   [&](std::span<const uint8_t> key, std::span<const uint8_t>) {
                     uint64_t k;
                     std::memcpy(&k, key.data(), 8);
                     keys.insert(k);
                     ++visited;
                     return true;
                   });
    ASSERT_EQ(visited, kKeys);
    ASSERT_EQ(keys.size(), kKeys);
    ASSERT_EQ(map_counters(map).drops, 0u);
    clear_map(map);
  }
}

TEST(MapsConcurrency, AtomicIncrementsOnAPlainHashSumExactly) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  void *map = region.map(0);
  constexpr int kThreads = 8;
  constexpr uint64_t kEvents = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (uint64_t i = 0; i < kEvents; ++i)
        count_event(map, i % 32, /*atomic_increment=*/true);
    });
  for (auto &t : threads)
    t.join();
  for (uint64_t k = 0; k < 32; ++k) {
    uint64_t *value = lookup_u64(map, k);
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(*value, kThreads * kEvents / 32) << k;
  }
}

// Writers insert, overwrite and delete keys whose value is always key * 3,
// while the CLI snapshots: a snapshot never shows a key twice, nor a torn
// key, nor (plain hash) a value that belongs to another key. Each writer owns
// its keys: an update racing a delete of the same key may land in the entry
// after it was reused (as a pointer from the kernel's lookup may), and so may
// one racing an LRU eviction, so values are checked on the plain hash only.
TEST(MapsConcurrency, SnapshotsDuringChurnAreConsistent) {
  for (MapKind kind : {MapKind::Hash, MapKind::LruHash}) {
    Region region = make_region({{kind, 16, 24, 256}});
    void *map = region.map(0);
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    // Stops and joins the writers however the checks below leave the scope.
    struct Joiner {
      std::atomic<bool> &stop;
      std::vector<std::thread> &threads;
      ~Joiner() {
        stop = true;
        for (auto &t : threads)
          if (t.joinable())
            t.join();
      }
    } joiner{stop, writers};
    for (int t = 0; t < 4; ++t)
      writers.emplace_back([&, t] {
        uint64_t seed = 99 + t;
        while (!stop) {
          seed = seed * 6364136223846793005ull + 1442695040888963407ull;
          const uint64_t k = (seed >> 33) % 600 / 4 * 4 + t;
          const uint64_t key[2] = {k, ~k};
          const uint64_t value[3] = {k * 3, k * 3, k * 3};
          if ((seed >> 20) % 3 == 0)
            ubt_bpf_map_delete_elem(map, key);
          else
            ubt_bpf_map_update_elem(map, key, value, 0);
        }
      });
    for (int round = 0; round < 300; ++round) {
      const MapSnapshot snap = snapshot(map);
      std::set<uint64_t> keys;
      for (size_t i = 0; i < snap.entries; ++i) {
        uint64_t key[2], value[3];
        std::memcpy(key, snap.key(i).data(), 16);
        std::memcpy(value, snap.value(i, 0).data(), 24);
        ASSERT_EQ(key[1], ~key[0]);
        if (kind == MapKind::Hash) {
          ASSERT_EQ(value[0], key[0] * 3);
          ASSERT_EQ(value[2], key[0] * 3);
        }
        ASSERT_TRUE(keys.insert(key[0]).second) << "duplicate " << key[0];
      }
      // clear() deletes other threads' keys: an update racing it may land
      // in a reused entry (see above), so only where values go unchecked.
      if (kind == MapKind::LruHash && round % 50 == 49)
        clear_map(map);
    }
    stop = true;
    for (auto &t : writers)
      t.join();
    // Quiet now: the counters agree with the contents.
    EXPECT_EQ(snapshot(map).entries, map_counters(map).entries);
  }
}

uint64_t merged_total(const MapSnapshot &snap) {
  uint64_t total = 0;
  for (size_t i = 0; i < snap.entries; ++i)
    for (uint32_t s = 0; s < snap.info.slots; ++s) {
      uint64_t v;
      std::memcpy(&v, snap.value(i, s).data(), 8);
      total += v;
    }
  return total;
}

TEST(MapsConcurrency, PerSlotCountsSurviveConcurrentSnapshotsAndZero) {
  Region region = make_region({{MapKind::PerCpuHash, 8, 8, 64}});
  void *map = region.map(0);
  constexpr int kThreads = 4;
  constexpr uint64_t kEvents = 300000;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (uint64_t i = 0; i < kEvents; ++i)
        count_event(map, i % 8, /*atomic_increment=*/false);
      --running;
    });
  uint64_t last_total = 0;
  // At least one snapshot: on a loaded machine the threads may all be done
  // before this one runs again.
  do {
    // Threads are still claiming slots: every entry has info.slots values.
    const MapSnapshot snap = snapshot(map);
    ASSERT_EQ(snap.values.size(),
              snap.entries * snap.info.slots * snap.info.value_size);
    const uint64_t total = merged_total(snap);
    // Counts only grow between snapshots (no zero() yet).
    EXPECT_GE(total, last_total);
    last_total = total;
  } while (running > 0);
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(merged_total(snapshot(map)), kThreads * kEvents);
  zero_map(map);
  const MapSnapshot zeroed = snapshot(map);
  EXPECT_EQ(zeroed.entries, 8u);
  EXPECT_EQ(merged_total(zeroed), 0u);
}

} // namespace
} // namespace ubtrace::runtime::maps
