// Waiting for a hash map's insert lock: whom a waiter gives up on, and when.
// A holder that keeps the lock past the timeout is what a saturated machine
// makes of a thread of the traced process itself (1000 threads woken at once
// on two CPUs dropped 842 of 1000 first updates of a per-thread map: the
// preempted holder was off the CPU for 650 ms); a holder in another process
// that stopped is what the timeout is for.
#include "runtime/maps/actor.h"
#include "runtime/maps/format.h"
#include "runtime/maps/hash_map.h"
#include "runtime/maps/map_lock.h"
#include "runtime/maps/map_reader.h"
#include "tests/unit/maps/test_support.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <thread>
#include <unistd.h>

namespace ubtrace::runtime::maps {
namespace {

using test::lookup_u64;
using test::make_region;
using test::start_attached_child;
using test::update_u64;

// The lock is held by another thread of this process that does not run
// for three timeouts (as a preempted, starved holder does not).
TEST(MapsInsertLock, ASiblingHolderOffTheCpuPastTheTimeoutCostsNoUpdate) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  std::atomic<bool> held{false};
  std::thread holder([&] {
    ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
    held.store(true);
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(3 * kInsertLockTimeoutNs));
    unlock_map(map);
  });
  while (!held.load())
    std::this_thread::yield();
  EXPECT_EQ(update_u64(map, 7, 70), 0);
  holder.join();
  ASSERT_NE(lookup_u64(map, 7), nullptr);
  EXPECT_EQ(*lookup_u64(map, 7), 70u);
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.drops, 0u);
  EXPECT_EQ(counters.lock_timeouts, 0u);
}

// The holder is a process sharing the region that was stopped with the
// lock: the insert is dropped after the timeout, and counted as such.
TEST(MapsInsertLock, AStoppedHolderInAnotherProcessIsGivenUpOn) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  const pid_t child = start_attached_child(region, [](Region &mine) {
    return lock_map(static_cast<MapHeader *>(mine.map(0)), 1'000'000'000) ==
                   LockResult::Acquired
               ? 0
               : 11;
  });
  ASSERT_GT(child, 0);
  kill(child, SIGSTOP);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));

  void *map = region.map(0);
  EXPECT_EQ(update_u64(map, 1, 1), -EBUSY);
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.lock_timeouts, 1u);
  EXPECT_EQ(counters.drops, 1u);
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  // The dead holder's lock is taken over by the next insert.
  EXPECT_EQ(update_u64(map, 1, 1), 0);
}

// A sibling that never lets go (a written-over lock word can name one, too)
// holds nobody forever: the insert gives up at the hard bound.
TEST(MapsInsertLock, ASiblingThatNeverLetsGoIsGivenUpOnAtTheHardBound) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  std::atomic<bool> held{false}, done{false};
  std::thread holder([&] {
    ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
    held.store(true);
    while (!done.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    unlock_map(map);
  });
  while (!held.load())
    std::this_thread::yield();
  EXPECT_EQ(update_u64(map, 3, 3), -EBUSY);
  done.store(true);
  holder.join();
  EXPECT_EQ(map_counters(map).lock_timeouts, 1u);
  EXPECT_EQ(update_u64(map, 3, 3), 0);
}

// A sibling that runs on with the lock held has left its insert (a signal
// handler's longjmp out of a probe): the lock is taken over, as from a dead
// holder, and its half-done insert undone.
TEST(MapsInsertLock, ASiblingThatRunsOnWithTheLockIsTakenOverFrom) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  std::atomic<bool> held{false}, done{false};
  std::thread holder([&] {
    ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
    map->pending_entry = map->bump++;
    map->pending_state = 2; // counted, never published
    map->count.fetch_add(1);
    held.store(true);
    while (!done.load(std::memory_order_relaxed))
      ; // runs (its CPU clock moves) and never unlocks, as a left insert
  });
  while (!held.load())
    std::this_thread::yield();
  EXPECT_EQ(update_u64(map, 5, 50), 0);
  done.store(true);
  holder.join();
  ASSERT_NE(lookup_u64(map, 5), nullptr);
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.recoveries, 1u);
  EXPECT_EQ(counters.undone, 1u);  // and its update is counted lost
  EXPECT_EQ(counters.entries, 1u); // the half-done insert was undone
  EXPECT_EQ(counters.drops, 0u);
}

// A sibling that runs long with the lock but says its insert goes on (one
// zeroing ten thousand slots' values through page faults on a loaded
// machine) is waited for: taking it over corrupted the map (an update of a
// per-thread map with 10000 threads lost a third of the counts, reported
// nowhere).
TEST(MapsInsertLock, ASiblingThatRunsLongButGoesOnIsWaitedFor) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  std::atomic<bool> held{false};
  std::thread holder([&] {
    ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
    held.store(true);
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::nanoseconds(3 * kInsertLockTimeoutNs);
    while (std::chrono::steady_clock::now() < end) {
      const auto step =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
      while (std::chrono::steady_clock::now() < step)
        ; // on the CPU
      note_insert_progress(map);
    }
    unlock_map(map);
  });
  while (!held.load())
    std::this_thread::yield();
  EXPECT_EQ(update_u64(map, 4, 40), 0);
  holder.join();
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.recoveries, 0u);
  EXPECT_EQ(counters.undone, 0u);
  EXPECT_EQ(counters.drops, 0u);
  ASSERT_NE(lookup_u64(map, 4), nullptr);
  EXPECT_EQ(*lookup_u64(map, 4), 40u);
}

// A holder that was taken over from and comes back sees so, and its unlock
// leaves the new holder's lock alone (it once cleared the word, letting two
// inserters in at once).
TEST(MapsInsertLock, AHolderTakenOverFromLeavesTheNewHoldAlone) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  std::atomic<bool> held{false}, done{false}, still_held{true};
  std::thread holder([&] {
    ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
    held.store(true);
    while (!done.load(std::memory_order_relaxed))
      ; // runs with no progress: judged to have left its insert
    still_held.store(holds_map_lock(ProbeActor{map}, map));
    unlock_map(map);
  });
  while (!held.load())
    std::this_thread::yield();
  EXPECT_EQ(update_u64(map, 6, 60), 0); // takes the lock over
  ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
  const uint32_t mine = map->insert_lock.load();
  done.store(true);
  holder.join();
  EXPECT_FALSE(still_held.load());
  EXPECT_EQ(map->insert_lock.load(), mine);
  unlock_map(map);
  EXPECT_EQ(map->insert_lock.load(), 0u);
  EXPECT_EQ(map_counters(map).recoveries, 1u);
  EXPECT_EQ(map_counters(map).undone, 0u); // it had not begun an insert
}

// This thread holds the lock but runs no insert: a longjmp left the one
// that took it. Its next insert takes the lock over.
TEST(MapsInsertLock, ALockTheCallerLeftHeldIsTakenOver) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
  EXPECT_EQ(update_u64(map, 9, 90), 0);
  EXPECT_EQ(map_counters(map).recoveries, 1u);
  EXPECT_EQ(update_u64(map, 10, 100), 0); // and it was let go after
  EXPECT_EQ(map_counters(map).recoveries, 1u);
}

// A child made by _Fork() runs no fork handler and starts with its parent's
// thread's slot cache. Under that thread's name the lock the parent holds
// would look like its own: taking it over would undo an insert the parent is
// in the middle of, and refusing it dropped the child's first update (a
// uretprobe on _Fork counting returns, parent and child at once, lost one).
// The child claims a slot of its own and waits for the parent like any
// other inserter.
TEST(MapsInsertLock, AForkChildWaitsForItsParentsLockUnderItsOwnName) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
  const pid_t child = _Fork();
  if (child == 0)
    _exit(update_u64(map, 1, 11) == 0 ? 0 : 1);
  ASSERT_GT(child, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(holds_map_lock(ProbeActor{map}, map)); // not taken over
  unlock_map(map);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(test::exited_ok(status)) << status;
  ASSERT_NE(lookup_u64(map, 1), nullptr);
  EXPECT_EQ(*lookup_u64(map, 1), 11u);
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.recoveries, 0u);
  EXPECT_EQ(counters.drops, 0u);
}

// A vfork() child shares its parent's memory and thread slot while the
// parent waits: a lock held under that name is the parent's, left by a
// longjmp, or being taken right now by nobody else. The child must not take
// it over; its insert is dropped and counted as the lock's.
TEST(MapsInsertLock, AVforkChildDoesNotTakeOverItsParentsLock) {
  Region region = make_region({{MapKind::Hash, 8, 8, 64}});
  auto *map = static_cast<MapHeader *>(region.map(0));
  ASSERT_EQ(lock_map(map, 1'000'000'000), LockResult::Acquired);
  const uint32_t held = map->insert_lock.load();
  volatile long result = 0;
  const pid_t child = vfork();
  if (child == 0) {
    result = update_u64(map, 1, 1);
    _exit(0);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(result, -EBUSY);
  EXPECT_EQ(map->insert_lock.load(), held);
  const MapCounters counters = map_counters(map);
  EXPECT_EQ(counters.recoveries, 0u);
  EXPECT_EQ(counters.lock_drops, 1u);
  unlock_map(map);
  EXPECT_EQ(update_u64(map, 1, 1), 0);
}

} // namespace
} // namespace ubtrace::runtime::maps
