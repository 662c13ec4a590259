// Per-slot maps: each thread writes its own slot with plain increments; the
// CLI merges the slots. Slots are recycled when threads exit, and a thread
// that finds no free slot is refused and counted.
#include "runtime/maps/format.h"
#include "runtime/maps/map_reader.h"
#include "runtime/maps/thread_slot.h"
#include "tests/unit/maps/test_support.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ubtrace::runtime::maps {
namespace {

using test::count_event;
using test::lookup_u64;
using test::make_region;
using test::update_u64;

uint64_t merged_u64(const void *map, uint64_t key) {
  std::vector<uint8_t> values;
  if (!read_entry(map, &key, values))
    return UINT64_MAX;
  uint64_t sum = 0;
  for (size_t i = 0; i < values.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, values.data() + i, 8);
    sum += v;
  }
  return sum;
}

// A child made by _Fork() (no fork handler runs) starts with its forking
// thread's slot cache; the slot is that thread's, which writes it with plain
// increments at the same time. The child claims another.
TEST(MapsPerSlot, AForkChildWritesASlotOfItsOwn) {
  Region region = make_region({{MapKind::PerCpuArray, 0, 8, 1}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  const uint32_t parents = thread_slot(map);
  ASSERT_NE(parents, kNoSlot);
  const pid_t child = _Fork();
  if (child == 0) {
    const uint32_t mine = thread_slot(map);
    _exit(mine != kNoSlot && mine != parents &&
                  holds_slot_mutex(region_of(map), mine)
              ? 0
              : 1);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(test::exited_ok(status)) << status;
  EXPECT_EQ(thread_slot(map), parents); // the parent keeps its own
  EXPECT_TRUE(holds_slot_mutex(region_of(map), parents));
}

// A child of the raw fork system call has no robust mutex list (nor has a
// child of glibc's fork in the instant before _Fork sets one up: a probe on
// clone's exit): locking a slot's mutex there would link it to the mutexes
// glibc's copied thread descriptor lists, writing into the parent's slot
// mutex in the shared region (the parent's list then led into unmapped
// memory and crashed it). The child borrows its forking thread's slot where
// that thread had one, and is refused (and counted) where it had none.
TEST(MapsPerSlot, ARawForkChildBorrowsItsParentsSlotOrIsRefused) {
  Region region = make_region({{MapKind::PerCpuArray, 0, 8, 1}});
  Region other = make_region({{MapKind::PerCpuArray, 0, 8, 1}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  auto *untouched = static_cast<MapHeader *>(other.map(0));
  const uint32_t parents = thread_slot(map);
  ASSERT_NE(parents, kNoSlot);
  ThreadSlot &slot = thread_slots(region_of(map))[parents];
  std::vector<uint8_t> before(sizeof slot.owner);
  std::memcpy(before.data(), &slot.owner, before.size());
  const uint32_t zero = 0;
  const uint64_t one = 1;
  const pid_t child = static_cast<pid_t>(syscall(SYS_fork));
  if (child == 0) {
    const bool borrowed = thread_slot(map) == parents &&
                          thread_slot_borrowed() &&
                          ubt_bpf_map_update_elem(map, &zero, &one, 0) == 0;
    const bool refused =
        thread_slot(untouched) == kNoSlot &&
        ubt_bpf_map_update_elem(untouched, &zero, &one, 0) == -E2BIG;
    _exit(borrowed && refused ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(test::exited_ok(status)) << status;
  EXPECT_EQ(std::memcmp(before.data(), &slot.owner, before.size()), 0);
  EXPECT_EQ(merged_u64(map, 0), 1u);
  EXPECT_EQ(map_counters(untouched).slot_drops, 1u);
  EXPECT_EQ(other.slot_raw_children(), 2u); // the lookup's and the update's
  EXPECT_EQ(thread_slot(map), parents);
  EXPECT_FALSE(thread_slot_borrowed());
}

TEST(MapsPerSlot, EachThreadGetsItsOwnCacheLine) {
  Region region = make_region({{MapKind::PerCpuArray, 0, 8, 1}});
  void *map = region.map(0);
  const uint32_t zero = 0;
  void *mine = ubt_bpf_map_lookup_elem(map, &zero);
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(ubt_bpf_map_lookup_elem(map, &zero), mine); // stable
  std::set<uintptr_t> lines = {reinterpret_cast<uintptr_t>(mine) / 64};
  for (int t = 0; t < 3; ++t) {
    std::thread([&] {
      void *theirs = ubt_bpf_map_lookup_elem(map, &zero);
      ASSERT_NE(theirs, nullptr);
      lines.insert(reinterpret_cast<uintptr_t>(theirs) / 64);
    }).join();
  }
  // Sequential threads recycle one slot; the main thread keeps its own.
  EXPECT_EQ(lines.size(), 2u);
  EXPECT_EQ(region.thread_slots_used(), 2u);

  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<uintptr_t> concurrent(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      concurrent[t] =
          reinterpret_cast<uintptr_t>(ubt_bpf_map_lookup_elem(map, &zero));
      ++ready;
      while (!go)
        std::this_thread::yield();
    });
  while (ready < 4)
    std::this_thread::yield();
  go = true;
  for (auto &t : threads)
    t.join();
  std::set<uintptr_t> distinct;
  for (uintptr_t p : concurrent) {
    EXPECT_NE(p, 0u);
    distinct.insert(p / 64);
  }
  distinct.insert(reinterpret_cast<uintptr_t>(mine) / 64);
  EXPECT_EQ(distinct.size(), 5u) << "live threads share no cache line";
}

TEST(MapsPerSlot, PlainIncrementsFromManyThreadsSumExactly) {
  Region region = make_region(
      {{MapKind::PerCpuArray, 0, 8, 1}, {MapKind::PerCpuHash, 8, 8, 128}});
  void *scalar = region.map(0);
  void *keyed = region.map(1);
  constexpr int kThreads = 8;
  constexpr uint64_t kEvents = 200000;
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const uint32_t zero = 0;
      // Start together, so that the threads overlap.
      ++ready;
      while (ready < kThreads)
        std::this_thread::yield();
      for (uint64_t i = 0; i < kEvents; ++i) {
        test::plain_increment(
            static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(scalar, &zero)));
        count_event(keyed, i % 16, /*atomic_increment=*/false);
        count_event(keyed, 100 + t, /*atomic_increment=*/false);
      }
    });
  for (auto &t : threads)
    t.join();
  const uint32_t zero = 0;
  std::vector<uint8_t> values;
  ASSERT_TRUE(read_entry(scalar, &zero, values));
  uint64_t total = 0;
  for (size_t i = 0; i < values.size(); i += 8)
    total += *reinterpret_cast<uint64_t *>(values.data() + i);
  EXPECT_EQ(total, kThreads * kEvents);
  for (uint64_t k = 0; k < 16; ++k)
    EXPECT_EQ(merged_u64(keyed, k), kThreads * kEvents / 16) << k;
  for (uint64_t t = 0; t < kThreads; ++t)
    EXPECT_EQ(merged_u64(keyed, 100 + t), kEvents) << t;
  EXPECT_EQ(map_counters(keyed).drops, 0u);
}

TEST(MapsPerSlot, UpdateWritesOnlyTheCallersSlot) {
  Region region = make_region({{MapKind::PerCpuHash, 8, 8, 16}});
  void *map = region.map(0);
  ASSERT_EQ(update_u64(map, 1, 10), 0);
  std::thread([&] {
    EXPECT_EQ(*lookup_u64(map, 1), 0u); // exists, but not in this slot
    ASSERT_EQ(update_u64(map, 1, 5), 0);
    EXPECT_EQ(*lookup_u64(map, 1), 5u);
  }).join();
  EXPECT_EQ(*lookup_u64(map, 1), 10u);
  EXPECT_EQ(merged_u64(map, 1), 15u);
  EXPECT_EQ(map_info(map).slots, 2u);
}

TEST(MapsPerSlot, LookupPercpuElemReadsOtherThreadsSlots) {
  Region region = make_region({{MapKind::PerCpuHash, 8, 8, 16},
                               {MapKind::PerCpuArray, 0, 8, 1},
                               {MapKind::Hash, 8, 8, 16}});
  void *hash = region.map(0);
  void *array = region.map(1);
  const uint64_t key = 3;
  const uint32_t zero = 0;
  ASSERT_EQ(update_u64(hash, key, 10), 0);
  ASSERT_EQ(ubt_bpf_map_update_elem(array, &zero, &key, 0), 0);
  std::thread([&] {
    ASSERT_EQ(update_u64(hash, key, 20), 0);
    const uint64_t four = 4;
    ASSERT_EQ(ubt_bpf_map_update_elem(array, &zero, &four, 0), 0);
  }).join();
  ASSERT_EQ(region.thread_slots_used(), 2u);
  uint64_t sum = 0, array_sum = 0;
  for (uint32_t cpu = 0; cpu < 2; ++cpu) {
    auto *value = static_cast<uint64_t *>(
        ubt_bpf_map_lookup_percpu_elem(hash, &key, cpu));
    ASSERT_NE(value, nullptr) << cpu;
    sum += *value;
    array_sum += *static_cast<uint64_t *>(
        ubt_bpf_map_lookup_percpu_elem(array, &zero, cpu));
  }
  EXPECT_EQ(sum, 30u);
  EXPECT_EQ(array_sum, 7u);
  // Slots never claimed, missing keys, indexes past the end, plain maps.
  EXPECT_EQ(ubt_bpf_map_lookup_percpu_elem(hash, &key, 2), nullptr);
  EXPECT_EQ(ubt_bpf_map_lookup_percpu_elem(hash, &key, 100000), nullptr);
  const uint64_t missing = 4;
  const uint32_t past = 1;
  EXPECT_EQ(ubt_bpf_map_lookup_percpu_elem(hash, &missing, 0), nullptr);
  EXPECT_EQ(ubt_bpf_map_lookup_percpu_elem(array, &past, 0), nullptr);
  ASSERT_EQ(update_u64(region.map(2), key, 1), 0);
  EXPECT_EQ(ubt_bpf_map_lookup_percpu_elem(region.map(2), &key, 0), nullptr);
}

TEST(MapsPerSlot, ReusedEntryStartsAtZeroInEverySlot) {
  Region region = make_region({{MapKind::PerCpuHash, 8, 8, 1}});
  void *map = region.map(0);
  ASSERT_EQ(update_u64(map, 1, 1), 0); // this thread claims its slot first
  std::thread([&] { ASSERT_EQ(update_u64(map, 1, 99), 0); }).join();
  EXPECT_EQ(merged_u64(map, 1), 100u);
  ASSERT_EQ(test::delete_u64(map, 1), 0);
  // The one entry is reused for another key: the other thread's 99 is gone.
  ASSERT_EQ(update_u64(map, 2, 3), 0);
  EXPECT_EQ(merged_u64(map, 2), 3u);
}

TEST(MapsPerSlot, RecycledSlotKeepsItsPartialSums) {
  Region region =
      make_region({{MapKind::PerCpuArray, 0, 8, 1}}, {.thread_slots = 1});
  void *map = region.map(0);
  const uint32_t zero = 0;
  for (int t = 0; t < 10; ++t)
    std::thread([&] {
      auto *value =
          static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &zero));
      ASSERT_NE(value, nullptr);
      for (int i = 0; i < 1000; ++i)
        test::plain_increment(value);
    }).join();
  EXPECT_EQ(region.thread_slots_used(), 1u);
  EXPECT_EQ(merged_u64(map, 0), 10000u);
}

TEST(MapsPerSlot, MoreLiveThreadsThanSlotsAreRefusedAndCounted) {
  Region region = make_region(
      {{MapKind::PerCpuArray, 0, 8, 1}, {MapKind::PerCpuHash, 8, 8, 8}},
      {.thread_slots = 2});
  void *scalar = region.map(0);
  void *keyed = region.map(1);
  const uint32_t zero = 0;
  std::atomic<int> holding{0};
  std::atomic<bool> release{false};
  std::vector<std::thread> holders;
  for (int t = 0; t < 2; ++t)
    holders.emplace_back([&] {
      EXPECT_NE(ubt_bpf_map_lookup_elem(scalar, &zero), nullptr);
      ++holding;
      while (!release)
        std::this_thread::yield();
    });
  while (holding < 2)
    std::this_thread::yield();

  std::thread([&] {
    EXPECT_EQ(ubt_bpf_map_lookup_elem(scalar, &zero), nullptr);
    const uint64_t one = 1;
    EXPECT_EQ(ubt_bpf_map_update_elem(scalar, &zero, &one, 0), -E2BIG);
    EXPECT_EQ(update_u64(keyed, 5, 1), -E2BIG);
  }).join();
  EXPECT_EQ(map_counters(scalar).drops, 1u);
  EXPECT_EQ(map_counters(keyed).drops, 1u);
  EXPECT_GE(region.slot_exhausted(), 1u);
  EXPECT_EQ(map_counters(keyed).entries, 0u);

  release = true;
  for (auto &t : holders)
    t.join();
  // Freed slots are claimed again by new threads.
  std::thread([&] {
    EXPECT_NE(ubt_bpf_map_lookup_elem(scalar, &zero), nullptr);
  }).join();
}

TEST(MapsPerSlot, RefusedThreadRetriesLater) {
  Region region =
      make_region({{MapKind::PerCpuArray, 0, 8, 1}}, {.thread_slots = 1});
  void *map = region.map(0);
  const uint32_t zero = 0;
  std::atomic<bool> holding{false}, refused{false}, holder_done{false};
  std::thread holder([&] {
    EXPECT_NE(ubt_bpf_map_lookup_elem(map, &zero), nullptr);
    holding = true;
    while (!refused)
      std::this_thread::yield();
  });
  while (!holding)
    std::this_thread::yield();
  std::thread waiter([&] {
    EXPECT_EQ(ubt_bpf_map_lookup_elem(map, &zero), nullptr);
    refused = true;
    while (!holder_done)
      std::this_thread::yield();
    void *value = nullptr;
    for (uint32_t i = 0; i <= 2 * kSlotRetryInterval && value == nullptr; ++i)
      value = ubt_bpf_map_lookup_elem(map, &zero);
    EXPECT_NE(value, nullptr);
  });
  holder.join();
  holder_done = true;
  waiter.join();
}

} // namespace
} // namespace ubtrace::runtime::maps
