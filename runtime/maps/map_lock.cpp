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
// kWaiters while someone sleeps on it.
constexpr uint32_t kHeld = 1u << 30;
constexpr uint32_t kWaiters = 1u << 31;
constexpr uint32_t kHolderBits = kHeld | 0x0fffffff;
constexpr int kSpins = 2000;
constexpr uint64_t kNapNs = 1'000'000;

template <class Actor> uint32_t my_holder_word(const Actor &actor) {
  const uint32_t slot = actor.slot();
  if (slot == kNoSlot)
    return 0;
  return kHeld | slot | (actor.generation() & 0x3fff) << 14;
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
    if ((held & kHolderBits) == me)
      return LockResult::Failed; // re-entered: a probe in a signal handler
    __builtin_ia32_pause();
  }
  const uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    // The deadline holds however the word moves (a process writing over
    // the region can keep any compare-and-swap below failing).
    if (now_ns() >= deadline)
      return LockResult::TimedOut;
    uint32_t held = word.load(std::memory_order_relaxed);
    if (held == 0) {
      // Others may still sleep: keep the flag so that unlock wakes them.
      if (word.compare_exchange_weak(held, me | kWaiters,
                                     std::memory_order_acquire))
        return LockResult::Acquired;
      continue;
    }
    if ((held & kHolderBits) == me)
      return LockResult::Failed;
    if (!holder_alive(actor, held)) {
      if (word.compare_exchange_strong(held, me | (held & kWaiters),
                                       std::memory_order_acquire))
        return LockResult::OwnerDied;
      continue;
    }
    const uint64_t now = now_ns();
    if (now >= deadline)
      return LockResult::TimedOut;
    if (!(held & kWaiters) &&
        !word.compare_exchange_weak(held, held | kWaiters,
                                    std::memory_order_relaxed))
      continue;
    const uint64_t left = deadline - now;
    nap(word, held | kWaiters, left < kNapNs ? left : kNapNs);
    if (abandon && abandon(context))
      return LockResult::Abandoned;
  }
}

template LockResult lock_map(const ProbeActor &, MapHeader *, uint64_t,
                             LockAbandon, void *);
template LockResult lock_map(const CliActor &, MapHeader *, uint64_t,
                             LockAbandon, void *);
template LockResult try_lock_map(const ProbeActor &, MapHeader *);
template LockResult try_lock_map(const CliActor &, MapHeader *);

LockResult lock_map(MapHeader *map, uint64_t timeout_ns, LockAbandon abandon,
                    void *context) {
  return lock_map(ProbeActor{map}, map, timeout_ns, abandon, context);
}

LockResult try_lock_map(MapHeader *map) {
  return try_lock_map(ProbeActor{map}, map);
}

void unlock_map(MapHeader *map) {
  if (map->insert_lock.exchange(0, std::memory_order_release) & kWaiters)
    probe_safe::raw_syscall(SYS_futex,
                            reinterpret_cast<long>(&map->insert_lock),
                            FUTEX_WAKE, INT_MAX);
}

} // namespace ubtrace::runtime::maps
