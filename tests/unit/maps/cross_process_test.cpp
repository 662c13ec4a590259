// Two processes on one region: a forked child maps it again through the
// descriptor (at another address) and writes while the parent reads.
#include "runtime/maps/format.h"
#include "runtime/maps/map_lock.h"
#include "runtime/maps/map_reader.h"
#include "runtime/maps/thread_slot.h"
#include "tests/unit/maps/test_support.h"

#include <atomic>
#include <csignal>
#include <thread>

namespace ubtrace::runtime::maps {
namespace {

using test::count_event;
using test::exited_ok;
using test::lookup_u64;
using test::make_region;
using test::start_attached_child;
using test::start_child;
using test::update_u64;

uint64_t merged_total(const void *map) {
  const MapSnapshot snap = snapshot(map);
  uint64_t total = 0;
  for (size_t i = 0; i < snap.entries; ++i)
    for (uint32_t s = 0; s < snap.info.slots; ++s) {
      uint64_t v;
      std::memcpy(&v, snap.value(i, s).data(), 8);
      total += v;
    }
  return total;
}

TEST(MapsCrossProcess, ChildWritesThroughASecondMappingWhileParentReads) {
  Region region = make_region({{MapKind::PerCpuHash, 8, 8, 64},
                               {MapKind::Hash, 8, 8, 64},
                               {MapKind::PerCpuArray, 0, 8, 1}});
  constexpr int kThreads = 4;
  constexpr uint64_t kEvents = 100000;
  void *inherited = region.map(0);
  const int fd = region.fd();
  const pid_t child = start_child([&]() -> int {
    auto mine = Region::attach(fd);
    if (!mine)
      return 10;
    if (mine->map(0) == inherited)
      return 11; // must be a mapping of its own
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        const uint32_t zero = 0;
        for (uint64_t i = 0; i < kEvents; ++i) {
          count_event(mine->map(0), i % 8, false);
          count_event(mine->map(1), i % 8, true);
          test::plain_increment(static_cast<uint64_t *>(
              ubt_bpf_map_lookup_elem(mine->map(2), &zero)));
        }
      });
    for (auto &t : threads)
      t.join();
    return 0;
  });
  ASSERT_GT(child, 0);

  // Read while the child writes: totals only grow.
  uint64_t last = 0;
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    const uint64_t now = merged_total(region.map(0));
    EXPECT_GE(now, last);
    last = now;
  }
  ASSERT_TRUE(exited_ok(status)) << status;
  EXPECT_EQ(merged_total(region.map(0)), kThreads * kEvents);
  EXPECT_EQ(merged_total(region.map(1)), kThreads * kEvents);
  EXPECT_EQ(merged_total(region.map(2)), kThreads * kEvents);
  for (uint64_t k = 0; k < 8; ++k)
    EXPECT_EQ(*lookup_u64(region.map(1), k), kThreads * kEvents / 8);
}

TEST(MapsCrossProcess, SlotOfAKilledProcessIsTakenOverWithItsSums) {
  Region region =
      make_region({{MapKind::PerCpuArray, 0, 8, 1}}, {.thread_slots = 1});
  const pid_t child = start_attached_child(region, [](Region &mine) {
    const uint32_t zero = 0;
    auto *value =
        static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(mine.map(0), &zero));
    if (value == nullptr)
      return 11;
    for (int i = 0; i < 500; ++i)
      test::plain_increment(value);
    return 0;
  });
  ASSERT_GT(child, 0);
  const uint32_t zero = 0;
  // The child holds the only slot.
  EXPECT_EQ(ubt_bpf_map_lookup_elem(region.map(0), &zero), nullptr);
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  // Retry until the refused-claim back-off lets this thread try again.
  uint64_t *value = nullptr;
  for (uint32_t i = 0; i <= 2 * kSlotRetryInterval && !value; ++i)
    value =
        static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(region.map(0), &zero));
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(*value, 500u); // the dead process's partial sum is kept
  *value += 1;
  EXPECT_EQ(merged_total(region.map(0)), 501u);
}

// A process killed while holding a map's insert lock, half-way through an
// insert (entry taken and counted, never published).
TEST(MapsCrossProcess, InsertLockOfAKilledHolderIsRecovered) {
  constexpr uint32_t kMax = 8;
  Region region = make_region({{MapKind::Hash, 8, 8, kMax}});
  const pid_t child = start_attached_child(region, [](Region &mine) {
    auto *map = static_cast<MapHeader *>(mine.map(0));
    if (lock_map(map, 1'000'000'000) != LockResult::Acquired)
      return 11;
    map->pending_entry = map->bump++;
    map->pending_state = 2; // counted, as insert() does before publishing
    map->count.fetch_add(1);
    return 0;
  });
  ASSERT_GT(child, 0);
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);

  void *map = region.map(0);
  EXPECT_EQ(map_counters(map).entries, 1u); // the half-done insert
  for (uint64_t k = 0; k < kMax; ++k)
    ASSERT_EQ(update_u64(map, k, k), 0) << k;
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.recoveries, 1u);
  EXPECT_EQ(counters.entries, kMax); // nothing leaked
  EXPECT_EQ(update_u64(map, 100, 0), -E2BIG);
}

} // namespace
} // namespace ubtrace::runtime::maps
