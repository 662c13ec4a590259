#include "runtime/maps/thread_slot.h"

#include "runtime/maps/region_registry.h"
#include "runtime/maps/robust_mutex.h"
#include "runtime/probe_safe.h"

#include <atomic>
#include <cerrno>
#include <mutex>
#include <pthread.h>
#include <sys/syscall.h>

namespace ubtrace::runtime::maps {

__thread ThreadSlotCache g_thread_slot_cache
    __attribute__((tls_model("initial-exec")));

constinit WipedOnFork g_process_epoch{1};

namespace {

// An epoch no process has: a thread of a new child is making the child's.
constexpr uint32_t kAdopting = ~0u;

std::atomic<bool> g_sandboxed{false};

// The number after this process's last: counting instead of taking the pid
// keeps a child's first claim to one system call (none under a sandbox).
// Read before the epoch is marked kAdopting (last() may be that word).
uint32_t next_epoch() {
  const uint32_t next = epoch_number(g_process_epoch.last() + 1);
  return next == 0 ? 1 : next; // 0 is a wiped page
}

// A child whose thread has no robust list registered with the kernel (one
// of a raw fork or clone system call, or glibc's in the instant between the
// clone and _Fork's reset of the list: a probe on clone's exit) still has
// glibc's descriptor list the mutexes the parent's thread holds: the first
// slot mutex it locked would be linked to those, in the shared region,
// which rewrites the parent's list (the parent later crashed in
// pthread_mutex_trylock). What such a child does while that lasts:
// claim_thread_slot.
bool robust_list_registered() {
  if (g_sandboxed.load(std::memory_order_relaxed))
    return false; // get_robust_list may be what the filter kills
  long head = 0, length = 0;
  return probe_safe::raw_syscall(SYS_get_robust_list, 0,
                                 reinterpret_cast<long>(&head),
                                 reinterpret_cast<long>(&length)) == 0 &&
         head != 0;
}

// Gives the calling process an epoch of its own if its epoch still is
// `seen`: the threads of the parent hold none of this process's claims on
// its mappings. `robust`: glibc made the child (fork or _Fork), which
// registers the thread's robust list; otherwise the kernel is asked. False
// when another thread got there first.
bool adopt_process(uint32_t seen, bool robust) {
  const uint32_t epoch = next_epoch();
  if (!g_process_epoch.word().compare_exchange_strong(
          seen, kAdopting, std::memory_order_acquire))
    return false;
  registry::reset_claims_in_child();
  if (!robust)
    robust = robust_list_registered();
  g_process_epoch.store(robust ? epoch : epoch | kNoRobustList);
  return true;
}

// glibc keeps the values of the first 32 keys in the thread descriptor;
// pthread_setspecific on a higher key callocs (a lock, on the probe path).
constexpr pthread_key_t kKeysWithoutAllocation = 32;

std::atomic<bool> g_prepared{false};
pthread_key_t g_exit_key;
bool g_exit_key_live = false;   // created
bool g_exit_key_usable = false; // and below 32

// Takes the entry out of the cache first: a hook on the libc functions the
// release calls may run a probe on this thread, which must not find the
// slot being given up.
void release_entry(SlotCacheEntry &entry) {
  const SlotCacheEntry gone = entry;
  entry = SlotCacheEntry{};
  if (gone.region_id != 0 && gone.slot != kNoSlot &&
      epoch_number(gone.process) == epoch_number(g_process_epoch.word().load(
                                        std::memory_order_relaxed))) {
    ThreadSlot &slot = thread_slots(gone.region)[gone.slot];
    slot.claimed.store(0, std::memory_order_relaxed);
    pthread_mutex_unlock(&slot.owner);
    registry::release(gone.region);
  }
}

void on_thread_exit(void *) {
  for (SlotCacheEntry &entry : g_thread_slot_cache.way)
    release_entry(entry);
}

// The child's only thread is a copy of the forking one, with another tid: the
// slots in its cache belong to the parent's thread. Where the page wipes, a
// probe between _Fork's return and this handler may have made the child's
// epoch already (it is no longer 0); where it does not, this is the only
// place a child gets one.
void on_fork_child() {
  std::atomic<uint32_t> &word = g_process_epoch.word();
  uint32_t seen = word.load(std::memory_order_acquire);
  if (!g_process_epoch.wipes() || seen == 0)
    adopt_process(seen, true);
  else if (seen != kAdopting && (seen & kNoRobustList)) // glibc's list is set
    word.compare_exchange_strong(seen, epoch_number(seen));
}

// When the agent library is unloaded, threads must not call into it at exit.
__attribute__((destructor)) void remove_thread_hooks() {
  if (g_exit_key_live)
    pthread_key_delete(g_exit_key);
  g_exit_key_live = g_exit_key_usable = false;
}

bool take_slot(ThreadSlot &slot) {
  int rc = pthread_mutex_trylock(&slot.owner);
  if (rc == EOWNERDEAD) {
    // Its holder died: the slot, and its partial sums, are ours now.
    pthread_mutex_consistent(&slot.owner);
    rc = 0;
  }
  return rc == 0;
}

uint32_t try_claim(RegionHeader *region) {
  ThreadSlot *slots = thread_slots(region);
  const uint32_t count = region->thread_slots;
  uint32_t taken = kNoSlot;
  // Slots not marked claimed first; then claimed ones, whose holders may have
  // died without releasing them.
  for (uint32_t pass = 0; pass < 2 && taken == kNoSlot; ++pass) {
    for (uint32_t s = 0; s < count; ++s) {
      const bool marked = slots[s].claimed.load(std::memory_order_relaxed);
      if (marked != (pass == 1))
        continue;
      if (take_slot(slots[s])) {
        taken = s;
        break;
      }
    }
  }
  if (taken == kNoSlot)
    return kNoSlot;
  slots[taken].generation.fetch_add(1, std::memory_order_relaxed);
  slots[taken].claimed.store(1, std::memory_order_relaxed);
  // Raise the high-water mark before the first write to the slot: readers
  // and new entries rely on slots at or above it being untouched.
  uint32_t high = region->slot_high_water.load(std::memory_order_relaxed);
  while (high < taken + 1 && !region->slot_high_water.compare_exchange_weak(
                                 high, taken + 1, std::memory_order_seq_cst))
    ;
  return taken;
}

void move_to_front(int way) {
  ThreadSlotCache &cache = g_thread_slot_cache;
  const SlotCacheEntry entry = cache.way[way];
  for (int i = way; i > 0; --i)
    cache.way[i] = cache.way[i - 1];
  cache.way[0] = entry;
}

void insert_front(const SlotCacheEntry &entry) {
  ThreadSlotCache &cache = g_thread_slot_cache;
  release_entry(cache.way[kSlotCacheWays - 1]);
  for (int i = kSlotCacheWays - 1; i > 0; --i)
    cache.way[i] = cache.way[i - 1];
  cache.way[0] = entry;
}

} // namespace

uint32_t claim_thread_slot(RegionHeader *region) {
  ThreadSlotCache &cache = g_thread_slot_cache;
  uint32_t process = g_process_epoch.word().load(std::memory_order_acquire);
  if (process == 0) { // the first claim in a new child
    adopt_process(0, false);
    process = g_process_epoch.word().load(std::memory_order_acquire);
  }
  if (process == kAdopting)
    return kNoSlot; // for an instant, while another thread adopts
  const uint64_t id = region->region_id;
  if ((process & kNoRobustList) && robust_list_registered()) {
    // glibc's _Fork has set the child's list up since.
    uint32_t seen = process;
    g_process_epoch.word().compare_exchange_strong(seen, epoch_number(process));
    process = g_process_epoch.word().load(std::memory_order_acquire);
  }
  const uint32_t epoch = epoch_number(process);
  if (process & kNoRobustList) {
    // The thread's list still is its forking thread's. Where that thread
    // held slots, their mutexes are on it: the slot it held in this region
    // is borrowed (thread_slot_borrowed(): insert locks are taken under
    // another name than that thread's), and no other claim is made. Where
    // it held none, the list holds no mutex of ours and a slot is claimed,
    // to be claimed again once the list is set up (below).
    bool parents_held = false;
    for (int i = 0; i < kSlotCacheWays; ++i) {
      const SlotCacheEntry &entry = cache.way[i];
      if (entry.region_id == 0 || entry.slot == kNoSlot ||
          epoch_number(entry.process) == epoch)
        continue;
      if (entry.region_id == id) {
        move_to_front(i);
        return cache.way[0].slot;
      }
      parents_held = true;
    }
    if (parents_held) {
      region->slot_raw_children.fetch_add(1, std::memory_order_relaxed);
      return kNoSlot;
    }
  }
  for (SlotCacheEntry &entry : cache.way) {
    if (entry.region_id == 0 || entry.process == process)
      continue;
    if (epoch_number(entry.process) == epoch)
      release_entry(entry); // claimed before glibc set the list up
    else
      entry = SlotCacheEntry{}; // the parent's: not ours to release
  }
  for (int i = 0; i < kSlotCacheWays; ++i) {
    SlotCacheEntry &entry = cache.way[i];
    if (entry.region_id != id)
      continue;
    if (entry.slot != kNoSlot) {
      move_to_front(i);
      return cache.way[0].slot;
    }
    if (entry.generation > 0) { // refused lately: wait before retrying
      --entry.generation;
      move_to_front(i);
      return kNoSlot;
    }
    entry = SlotCacheEntry{};
    break;
  }

  if (!registry::acquire(region))
    return kNoSlot;
  const uint32_t slot = try_claim(region);
  if (slot == kNoSlot) {
    registry::release(region);
    region->slot_exhausted.fetch_add(1, std::memory_order_relaxed);
    insert_front({id, region, kNoSlot, kSlotRetryInterval, process});
    return kNoSlot;
  }
  const uint32_t generation =
      thread_slots(region)[slot].generation.load(std::memory_order_relaxed);
  insert_front({id, region, slot, generation, process});
  if (g_exit_key_usable)
    pthread_setspecific(g_exit_key, &cache);
  return slot;
}

void prepare_thread_slots() {
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  if (g_prepared.load(std::memory_order_acquire))
    return;
  g_exit_key_live = pthread_key_create(&g_exit_key, on_thread_exit) == 0;
  g_exit_key_usable = g_exit_key_live && g_exit_key < kKeysWithoutAllocation;
  g_process_epoch.place();
  pthread_atfork(nullptr, nullptr, on_fork_child);
  g_prepared.store(true, std::memory_order_release);
}

void thread_slots_sandboxed() {
  g_sandboxed.store(true, std::memory_order_relaxed);
}

void release_thread_slot(uint64_t region_id) {
  for (SlotCacheEntry &entry : g_thread_slot_cache.way)
    if (entry.region_id == region_id)
      release_entry(entry);
}

bool init_thread_slot(ThreadSlot &slot) {
  slot.generation.store(0, std::memory_order_relaxed);
  slot.claimed.store(0, std::memory_order_relaxed);
  return init_robust_mutex(slot.owner);
}

bool slot_holder_alive(RegionHeader *region, uint32_t slot,
                       uint32_t generation_low14) {
  if (slot >= region->thread_slots)
    return false;
  ThreadSlot &s = thread_slots(region)[slot];
  if ((s.generation.load(std::memory_order_acquire) & 0x3fff) !=
      generation_low14)
    return false; // taken over by another thread since
  const int rc = pthread_mutex_trylock(&s.owner);
  if (rc == EBUSY)
    return true; // held: its owner lives (or is the caller itself)
  if (rc == EOWNERDEAD) {
    // Dead: hand the slot back to the pool for the next claimer.
    s.claimed.store(0, std::memory_order_relaxed);
    pthread_mutex_consistent(&s.owner);
    pthread_mutex_unlock(&s.owner);
    return false;
  }
  if (rc == 0)
    pthread_mutex_unlock(&s.owner); // released: its owner exited
  return false;
}

namespace {
// The tid a slot's robust mutex names as its holder (its futex word, less
// the flag bits): 0 when free; kCliOwner-like values are no thread.
uint32_t slot_holder_tid(RegionHeader *region, uint32_t slot) {
  const auto *lock_word = reinterpret_cast<const std::atomic<uint32_t> *>(
      &thread_slots(region)[slot].owner.__data.__lock);
  return lock_word->load(std::memory_order_relaxed) & 0x3fffffff;
}
} // namespace

int64_t slot_holder_cpu_ns(RegionHeader *region, uint32_t slot) {
  if (slot >= region->thread_slots)
    return -1;
  const uint32_t tid = slot_holder_tid(region, slot);
  if (tid == 0 || tid >= 0x3fffffff)
    return -1; // free, or the CLI (cli_identity.h)
  return probe_safe::thread_cpu_ns(tid);
}

bool holds_slot_mutex(RegionHeader *region, uint32_t slot) {
  if (slot >= region->thread_slots)
    return false;
  return slot_holder_tid(region, slot) ==
         static_cast<uint32_t>(probe_safe::raw_syscall(SYS_gettid));
}

} // namespace ubtrace::runtime::maps
