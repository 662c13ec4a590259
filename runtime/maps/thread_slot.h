// Thread slots: which slot of a per-slot map value a thread writes, and who
// writes a ring record.
//
// Decision (see also format.h, ThreadSlot):
// - A region has a fixed pool of `thread_slots` slots, shared by every thread
//   of every process that maps it. A thread claims the lowest free slot the
//   first time it needs one and keeps it, cached in thread-local storage,
//   until it exits (a pthread key destructor releases it) or its process dies
//   (the robust mutex it holds is then marked OWNER_DIED by the kernel and
//   the next claimer takes the slot over).
// - A recycled slot keeps its values: they are partial sums that still belong
//   in the merge, and the new owner adds to them. The release (mutex unlock)
//   and the claim (lock) order the old owner's plain stores before the new
//   owner's, so the plain, non-atomic increments JIT'd code does are never
//   lost.
// - Slots are claimed lowest first and the region records a high-water mark,
//   so the CLI merges only slots that were ever used, and pages of the others
//   are never touched: reserving many slots costs address space, not memory.
// - When every slot is held by a live thread, the claim fails: lookups of
//   per-slot maps return NULL and updates fail, each counted as a drop of the
//   map, and the region counts the refused claims (slot_exhausted) so the CLI
//   can say "N threads had no slot, raise thread slots". A refused thread
//   retries after kSlotRetryInterval calls. Sharing a slot instead would lose
//   updates silently, since the increment codegen emits is not atomic.
#pragma once

#include "runtime/maps/format.h"
#include "runtime/wiped_on_fork.h"

#include <atomic>
#include <cstdint>

namespace ubtrace::runtime::maps {

struct SlotCacheEntry {
  uint64_t region_id;   // 0: unused
  RegionHeader *region; // the mapping the slot was claimed through
  uint32_t slot;        // kNoSlot: refused at the last try
  uint32_t generation;  // of the claim; retry countdown when refused
  uint32_t process;     // g_process_epoch when it was made
};

inline constexpr int kSlotCacheWays = 4;
inline constexpr uint32_t kSlotRetryInterval = 1024;

struct ThreadSlotCache {
  SlotCacheEntry way[kSlotCacheWays];
};

// initial-exec: the agent is a dlopen'ed library, and the default TLS model
// would call __tls_get_addr on every probe hit. The cache is small enough for
// glibc's static TLS surplus.
extern __thread ThreadSlotCache g_thread_slot_cache
    __attribute__((tls_model("initial-exec")));

// Which process the calling thread's cache entries were made in. A child made
// by fork(), _Fork() or a clone() without CLONE_VM starts with a copy of its
// forking thread's cache, whose slots stay that thread's: the child would
// write the parent thread's per-thread values at the same time as it (plain
// increments: updates lost) and take map insert locks under its name (the
// parent, judging its own name's hold left behind by a longjmp, would take
// it over in the middle of the child's insert). So the epoch, a number each
// child makes anew, lives in a page madvise(MADV_WIPEONFORK) zeroes in every
// such child: its first claim makes the child's epoch, and entries of
// another are dropped (not released: they are the parent's). A vfork()
// child shares the page and its parent's thread's slots, while that thread
// waits. Where the kernel has no MADV_WIPEONFORK (before 4.14), the fork
// handler alone renews it, in fork()'s children only. The static copy
// until prepare_thread_slots().
extern WipedOnFork g_process_epoch __attribute__((visibility("hidden")));
// Set in the epoch of a child whose thread has no robust mutex list yet
// (thread_slot.cpp: robust_list_registered).
inline constexpr uint32_t kNoRobustList = 1u << 31;

// The epoch's number, without the flag: the process an entry was made in.
inline uint32_t epoch_number(uint32_t epoch) {
  return epoch & ~kNoRobustList;
}

inline bool cached_slot(const SlotCacheEntry &hit, uint64_t region_id) {
  return hit.region_id == region_id && hit.slot != kNoSlot &&
         hit.process == g_process_epoch.word().load(std::memory_order_relaxed);
}

// Creates the thread-exit key and registers the fork handler: off the probe
// path, before the first claim (region creation and attachment do it), so
// that a first claim takes no lock (once it was pthread_once and
// pthread_atfork, which deadlocked a probe on _Fork: fork() holds the lock
// pthread_atfork waits on). Without it, slots of exited threads are only
// recovered through their dead owner's mutex. Idempotent.
void prepare_thread_slots();

// Slow path of thread_slot(): claims a slot. kNoSlot when none is free. Calls
// only lock-free libc functions: the robust mutex's trylock (uncontended or
// owner-dead: no system call) and, with a key below 32, pthread_setspecific.
uint32_t claim_thread_slot(RegionHeader *region);

inline uint32_t thread_slot(RegionHeader *region, uint64_t region_id) {
  const SlotCacheEntry &hit = g_thread_slot_cache.way[0];
  if (cached_slot(hit, region_id)) [[likely]]
    return hit.slot;
  return claim_thread_slot(region);
}

inline uint32_t thread_slot(const MapHeader *map) {
  const SlotCacheEntry &hit = g_thread_slot_cache.way[0];
  if (cached_slot(hit, map->region_id)) [[likely]]
    return hit.slot;
  return claim_thread_slot(region_of(map));
}

// The calling thread's claim generation of its current slot in the region
// (valid right after thread_slot() returned a slot).
inline uint32_t thread_slot_generation() {
  return g_thread_slot_cache.way[0].generation;
}

// The process runs under a seccomp filter (the agent tells: safe_copy.h's
// sandboxed()), which may kill a call of get_robust_list: a new child's
// first claim does not ask, and takes the child's thread to have no robust
// list until glibc's fork handler runs (claim_thread_slot says what it
// does meanwhile).
void thread_slots_sandboxed();

// Whether the slot thread_slot() just returned is borrowed from the thread
// that forked this process: a child whose thread has no robust mutex list
// yet uses its forking thread's slot, if it had one (thread_slot.cpp).
inline bool thread_slot_borrowed() {
  return epoch_number(g_thread_slot_cache.way[0].process) !=
         epoch_number(g_process_epoch.word().load(std::memory_order_relaxed));
}

// Releases the calling thread's slot in the region, if it holds one.
void release_thread_slot(uint64_t region_id);

// Sets up a slot's robust process-shared mutex (region creation).
bool init_thread_slot(ThreadSlot &slot);

// Whether the thread that held `slot` at claim `generation` (its low 14 bits,
// as ring records carry it) is still alive. A slot released or taken over
// since then means that thread is gone.
bool slot_holder_alive(RegionHeader *region, uint32_t slot,
                       uint32_t generation_low14);

// The CPU time the thread holding `slot` has used, in nanoseconds, if it is
// a thread of the calling process (not the CLI, not another process sharing
// the region); -1 otherwise. The tid comes from the slot mutex's word in the
// shared region: a wrong one names some other thread or none.
int64_t slot_holder_cpu_ns(RegionHeader *region, uint32_t slot);

// Whether the calling thread is the one that holds `slot`'s mutex: not so
// in a child made by _Fork() or vfork(), which runs with its parent's
// thread's slot cache (no fork handler ran to clear it). A system call:
// for rare paths.
bool holds_slot_mutex(RegionHeader *region, uint32_t slot);

} // namespace ubtrace::runtime::maps
