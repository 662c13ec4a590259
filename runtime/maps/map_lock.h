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
// Whether the caller holds the lock still: a holder judged to have left its
// insert (map_lock.cpp) may be taken over from while it works on, and must
// then leave the map as it is.
template <class Actor>
bool holds_map_lock(const Actor &actor, const MapHeader *map);
// Lets go of the lock if the caller holds it.
template <class Actor> void unlock_map(const Actor &actor, MapHeader *map);
LockResult lock_map(MapHeader *map, uint64_t timeout_ns,
                    LockAbandon abandon = nullptr, void *context = nullptr);
LockResult try_lock_map(MapHeader *map);
void unlock_map(MapHeader *map);

// The holder says its insert goes on (a step of it, or every so many slots
// zeroed): waiters judge a holder in their own process by the CPU time it
// used since its last progress. Only the holder writes it.
inline void note_insert_progress(MapHeader *map) {
  map->insert_progress.store(
      map->insert_progress.load(std::memory_order_relaxed) + 1,
      std::memory_order_relaxed);
}

} // namespace ubtrace::runtime::maps
