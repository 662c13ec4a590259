#include "runtime/maps/map_lock.h"

#include "runtime/maps/actor.h"
#include "runtime/probe_safe.h"

#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::runtime::maps {
namespace {

// Lock word: 0 when free; else kHeld | slot | generation << 14, plus
// kBorrowed for a child using its forking thread's slot (thread_slot.h:
// the same slot, another holder), and kWaiters while someone sleeps on it.
constexpr uint32_t kHeld = 1u << 30;
constexpr uint32_t kWaiters = 1u << 31;
constexpr uint32_t kBorrowed = 1u << 28;
constexpr uint32_t kHolderBits = kHeld | kBorrowed | 0x0fffffff;
constexpr int kSpins = 2000;
constexpr uint64_t kNapNs = 1'000'000;
constexpr uint64_t kMaxNapNs = 256'000'000;
constexpr uint64_t kStallNaps = 8;
// CPU time a holder in the waiter's process spends with the lock before it
// is judged to have left its insert (one with page faults under contention
// was seen to take 14 ms).
constexpr int64_t kSiblingRunNs = 50'000'000;
// However the lock moves, no wait outlasts this many timeouts.
constexpr uint64_t kHardBoundTimeouts = 25;

template <class Actor> uint32_t my_holder_word(const Actor &actor) {
  const uint32_t slot = actor.slot();
  if (slot == kNoSlot)
    return 0;
  return kHeld | slot | (actor.generation() & 0x3fff) << 14 |
         (actor.borrowed() ? kBorrowed : 0);
}

uint64_t now_ns() {
  timespec ts;
  probe_safe::raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC,
                          reinterpret_cast<long>(&ts));
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

template <class Actor> bool holder_alive(const Actor &actor, uint32_t word) {
  return actor.holder_alive(word & 0x3fff, (word >> 14) & 0x3fff);
}

void nap(std::atomic<uint32_t> &word, uint32_t expected, uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000ull),
              static_cast<long>(ns % 1'000'000'000ull)};
  // Not FUTEX_PRIVATE: holders in other processes wake this.
  probe_safe::raw_syscall(SYS_futex, reinterpret_cast<long>(&word), FUTEX_WAIT,
                          expected, reinterpret_cast<long>(&ts));
}

} // namespace

template <class Actor>
LockResult try_lock_map(const Actor &actor, MapHeader *map) {
  const uint32_t me = my_holder_word(actor);
  uint32_t expected = 0;
  if (me == 0 || !map->insert_lock.compare_exchange_strong(
                     expected, me, std::memory_order_acquire))
    return LockResult::Failed;
  return LockResult::Acquired;
}

template <class Actor>
LockResult lock_map(const Actor &actor, MapHeader *map, uint64_t timeout_ns,
                    LockAbandon abandon, void *context) {
  const uint32_t me = my_holder_word(actor);
  if (me == 0)
    return LockResult::Failed;
  std::atomic<uint32_t> &word = map->insert_lock;
  // Holders keep the lock for ~100 ns: spin, reading, before sleeping, which
  // would cost the holder a wake-up system call when it unlocks.
  for (int spin = 0; spin < kSpins; ++spin) {
    uint32_t held = word.load(std::memory_order_relaxed);
    if (held == 0) {
      if (word.compare_exchange_weak(held, me, std::memory_order_acquire))
        return LockResult::Acquired;
      continue;
    }
    if ((held & kHolderBits) == me) {
      // Held by this thread, which is in no insert (a probe never runs
      // inside another's on one thread): a signal handler's longjmp left
      // the insert that took it. Unless the caller only borrows the
      // holder's identity: a _Fork or vfork child, whose parent's thread
      // may be in that insert right now.
      if (!actor.is_slot_owner(me & 0x3fff))
        return LockResult::Failed;
      if (word.compare_exchange_strong(held, me | (held & kWaiters),
                                       std::memory_order_acquire))
        return LockResult::OwnerDied;
      continue;
    }
    // Others sleep on it already: spinning too only takes the CPU from the
    // holder.
    if (held & kWaiters)
      break;
    __builtin_ia32_pause();
  }
  // A holder is given up on when it makes no progress (keeps the lock) for
  // timeout_ns and for several of this waiter's naps, if it is elsewhere
  // (a SIGSTOP'ed CLI, a stopped child: what the timeout is for). A holder
  // that is a thread of the waiter's own process is different: it is often
  // runnable and starved (a thousand threads woken at once on two CPUs kept
  // one, preempted in a page fault while holding the lock, off the CPU for
  // more than the timeout: the scheduler runs woken sleepers first) and
  // stops alone only under a debugger; so it is waited for, unless it has
  // run meanwhile (used kSiblingRunNs of CPU; an insert takes a
  // microsecond): then it left its insert (a signal handler's longjmp out of
  // a probe) and the lock is taken over as from a dead holder. The naps grow
  // from kNapNs to kMaxNapNs: they are only there to see a holder that died
  // or stalled (nobody wakes the word then), and waiters polling every
  // millisecond took the CPUs from the holder. Counting naps keeps a stopped
  // whole process from timing out its waiters when it continues. However
  // the word moves (a process writing over the region can keep it moving,
  // name a sibling as its holder, or keep any compare-and-swap below
  // failing) no wait outlasts the hard bound.
  const uint64_t start = now_ns();
  const uint64_t hard_deadline = start + kHardBoundTimeouts * timeout_ns;
  uint64_t stalled_since = start;
  uint64_t naps = 0;
  uint64_t nap_ns = kNapNs;
  uint32_t last_holder = 0;
  uint32_t last_progress = 0;
  int64_t holder_cpu = -1; // at its last progress; -1: elsewhere
  for (;;) {
    uint32_t held = word.load(std::memory_order_relaxed);
    if (held == 0) {
      // Others may still sleep: keep the flag so that unlock wakes them.
      if (word.compare_exchange_weak(held, me | kWaiters,
                                     std::memory_order_acquire))
        return LockResult::Acquired;
      if (now_ns() >= hard_deadline)
        return LockResult::TimedOut;
      continue;
    }
    if ((held & kHolderBits) == me) {
      if (!actor.is_slot_owner(me & 0x3fff))
        return LockResult::Failed; // as above
      if (word.compare_exchange_strong(held, me | (held & kWaiters),
                                       std::memory_order_acquire))
        return LockResult::OwnerDied;
      continue;
    }
    const uint64_t now = now_ns();
    const uint32_t progress =
        map->insert_progress.load(std::memory_order_relaxed);
    if ((held & kHolderBits) != last_holder) {
      last_holder = held & kHolderBits; // progress: the wait starts again
      last_progress = progress;
      holder_cpu = actor.holder_cpu_ns(held & 0x3fff);
      stalled_since = now;
      naps = 0;
      nap_ns = kNapNs;
    } else if (progress != last_progress && holder_cpu >= 0) {
      // A sibling still working on its insert (zeroing thousands of slots'
      // values through page faults took more than kSiblingRunNs of CPU on a
      // loaded machine, and taking it over then corrupted the map): its CPU
      // time counts from here.
      last_progress = progress;
      holder_cpu = actor.holder_cpu_ns(held & 0x3fff);
    }
    if (!holder_alive(actor, held)) {
      if (word.compare_exchange_strong(held, me | (held & kWaiters),
                                       std::memory_order_acquire))
        return LockResult::OwnerDied;
      continue;
    }
    if (abandon && abandon(context))
      return LockResult::Abandoned;
    if (now >= hard_deadline)
      return LockResult::TimedOut;
    if (naps >= kStallNaps && now - stalled_since >= timeout_ns) {
      if (holder_cpu < 0)
        return LockResult::TimedOut; // elsewhere, and stopped
      if (actor.holder_cpu_ns(held & 0x3fff) - holder_cpu >= kSiblingRunNs) {
        // A sibling that runs on with the lock and no progress left its
        // insert: its half-done insert is undone like a dead holder's (and
        // should it still be inside, holds_map_lock stops it publishing).
        if (word.compare_exchange_strong(held, me | (held & kWaiters),
                                         std::memory_order_acquire))
          return LockResult::OwnerDied;
        continue;
      }
    }
    if (!(held & kWaiters) &&
        !word.compare_exchange_weak(held, held | kWaiters,
                                    std::memory_order_relaxed))
      continue;
    nap(word, held | kWaiters, nap_ns);
    ++naps;
    if (nap_ns < kMaxNapNs)
      nap_ns *= 2;
  }
}

template <class Actor>
bool holds_map_lock(const Actor &actor, const MapHeader *map) {
  const uint32_t me = my_holder_word(actor);
  return me != 0 &&
         (map->insert_lock.load(std::memory_order_acquire) & kHolderBits) == me;
}

// Lets go only of the caller's own hold: one taken over meanwhile (the
// caller was judged to have left its insert) is the new holder's.
template <class Actor> void unlock_map(const Actor &actor, MapHeader *map) {
  const uint32_t me = my_holder_word(actor);
  std::atomic<uint32_t> &word = map->insert_lock;
  uint32_t held = word.load(std::memory_order_relaxed);
  while ((held & kHolderBits) == me && me != 0) {
    if (word.compare_exchange_weak(held, 0, std::memory_order_release)) {
      if (held & kWaiters)
        probe_safe::raw_syscall(SYS_futex, reinterpret_cast<long>(&word),
                                FUTEX_WAKE, INT_MAX);
      return;
    }
  }
}

template LockResult lock_map(const ProbeActor &, MapHeader *, uint64_t,
                             LockAbandon, void *);
template LockResult lock_map(const CliActor &, MapHeader *, uint64_t,
                             LockAbandon, void *);
template LockResult try_lock_map(const ProbeActor &, MapHeader *);
template LockResult try_lock_map(const CliActor &, MapHeader *);
template bool holds_map_lock(const ProbeActor &, const MapHeader *);
template bool holds_map_lock(const CliActor &, const MapHeader *);
template void unlock_map(const ProbeActor &, MapHeader *);
template void unlock_map(const CliActor &, MapHeader *);

LockResult lock_map(MapHeader *map, uint64_t timeout_ns, LockAbandon abandon,
                    void *context) {
  return lock_map(ProbeActor{map}, map, timeout_ns, abandon, context);
}

LockResult try_lock_map(MapHeader *map) {
  return try_lock_map(ProbeActor{map}, map);
}

void unlock_map(MapHeader *map) {
  unlock_map(ProbeActor{map}, map);
}

} // namespace ubtrace::runtime::maps
