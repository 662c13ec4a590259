// Hash maps (Hash, LruHash, PerCpuHash, PerCpuLruHash): preallocated open
// addressing with linear probing, at most half full.
//
// Concurrency:
// - lookup and update of an existing key: lock-free (map_access.h);
// - delete: lock-free, one compare-and-swap of the bucket to a tombstone, the
//   entry goes back on a Treiber stack;
// - insert of a new key, LRU eviction, tombstone sweeps: under the map's
//   insert lock (map_lock.h). One inserter at a time is what makes "no
//   duplicate key" easy to hold while deletes run lock-free, and the only
//   popper of the free stack is the lock holder, so the stack has no ABA
//   problem.
// A lock holder that dies mid-insert is detected by the next locker and its
// half-done insert undone (at most one entry leaks).
#pragma once

#include "runtime/maps/format.h"
#include "runtime/maps/trusted.h"

#include <cstdint>

namespace ubtrace::runtime::maps {

// BPF update flags and the errors the helpers return (negative errno, as
// the kernel's helpers do).
inline constexpr uint64_t kBpfAny = 0;
inline constexpr uint64_t kBpfNoExist = 1;
inline constexpr uint64_t kBpfExist = 2;

// How long an insert waits for a holder of the insert lock that makes no
// progress before the update is dropped (map_lock.h says how "no progress"
// is told from "preempted on a busy machine"). Holders keep it for ~100 ns;
// a stopped holder (SIGSTOP'ed CLI, a debugger) is what the bound is for.
// Waiters sleep (futex) rather than spin.
inline constexpr uint64_t kInsertLockTimeoutNs = 200'000'000;

void init_hash_map(MapHeader &map);

long hash_update(MapHeader *map, const void *key, const void *value,
                 uint64_t flags);
long hash_delete(MapHeader *map, const void *key);

// Deletes the entry published at `bucket` as `word`; false if it changed.
bool hash_delete_published(MapHeader *map, uint32_t bucket, uint64_t word);

// Callback iteration over live entries with the calling thread's values.
using MapElemCallback = long (*)(void *map, void *key, void *value,
                                 void *context);
long hash_for_each(MapHeader *map, MapElemCallback callback, void *context);

// The same, by the CLI on a map it trusts nothing of but its own copy of
// the geometry (trusted.h; cli_identity.h says who it is).
long hash_update(const TrustedMap &map, const void *key, const void *value,
                 uint64_t flags);
long hash_delete(const TrustedMap &map, const void *key);
bool hash_delete_published(const TrustedMap &map, uint32_t bucket,
                           uint64_t word);
long hash_for_each(const TrustedMap &map, MapElemCallback callback,
                   void *context);

} // namespace ubtrace::runtime::maps
