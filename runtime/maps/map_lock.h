// The insert lock of a hash map: one 32-bit word in the map header naming its
// holder by thread slot (format.h), so that a waiter can tell a holder that
// died (its slot's robust mutex says so; see thread_slot.h) and take the lock
// over instead of waiting forever. Cheaper than a robust pthread mutex on
// every insert (one compare-and-swap to lock, one exchange to unlock) and it
// keeps glibc's per-thread robust list out of the probe path: only a slot
// claim, once per thread, touches it.
//
// A thread without a slot (the pool is exhausted) cannot be identified, so it
// cannot take the lock: its inserts are dropped (and counted).
#pragma once

#include "runtime/maps/format.h"

#include <cstdint>

namespace ubtrace::runtime::maps {

enum class LockResult {
  Acquired,
  OwnerDied, // acquired from a holder that died, or that left its insert
             // (a longjmp out of it): repair what it left
  TimedOut,
  Failed,    // not obtainable: the caller has no thread slot, or runs with
             // the identity of the thread holding it (a _Fork or vfork child);
             // for try_lock_map, the lock is held
  Abandoned, // the caller's reason to wait went away (see lock_map)
};

inline bool acquired(LockResult result) {
  return result == LockResult::Acquired || result == LockResult::OwnerDied;
}

// Spins, then sleeps on the word (futex, shared between processes) in short
// naps, checking that the holder still lives, until one holder has made no
// progress for timeout_ns of naps (map_lock.cpp; at most 25 timeouts in all).
// `actor` (actor.h) says who locks: the calling thread (the probe path: the
// overloads without it) or the CLI. After each nap (every unlock wakes the
// sleepers) `abandon`, if given, may say the lock is not needed any more.
using LockAbandon = bool (*)(void *context);
template <class Actor>
LockResult lock_map(const Actor &actor, MapHeader *map, uint64_t timeout_ns,
                    LockAbandon abandon = nullptr, void *context = nullptr);
template <class Actor>
LockResult try_lock_map(const Actor &actor, MapHeader *map); // never waits
LockResult lock_map(MapHeader *map, uint64_t timeout_ns,
                    LockAbandon abandon = nullptr, void *context = nullptr);
LockResult try_lock_map(MapHeader *map);
void unlock_map(MapHeader *map);

} // namespace ubtrace::runtime::maps
