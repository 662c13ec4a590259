#include "runtime/hook/thread_state.h"

#include "runtime/helpers/safe_copy.h"
#include "runtime/helpers/thread_identity.h"
#include "runtime/hook/cpu_sync.h"
#include "runtime/hook/hook.h"
#include "runtime/hook/return_stubs.h"
#include "runtime/hook/thread_pool.h"
#include "runtime/probe_safe.h"

#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

namespace ubtrace::runtime::hook {

ThreadPool g_thread_pool;
__thread ThreadState *t_thread_state
    __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

// glibc keeps the values of the first 32 keys in the thread descriptor
// itself; pthread_setspecific on a higher key callocs a second-level block
// the first time a thread uses it.
constexpr pthread_key_t kKeysWithoutAllocation = 32;

pthread_key_t g_exit_key;
bool g_key_usable = false; // set once, before any claim can read it

// The thread ran its exit destructor: later claims are transient.
__thread bool t_thread_exiting __attribute__((tls_model("initial-exec"))) =
    false;

void fold_counters(const ThreadState &ts) {
  ThreadPool &pool = g_thread_pool;
  pool.exited_nested_skips.fetch_add(ts.nested_skips);
  pool.exited_shadow_overflows.fetch_add(ts.shadow_overflows);
  pool.exited_vector_skips.fetch_add(ts.vector_skips);
  pool.exited_unwound_entries.fetch_add(ts.unwound_entries);
  pool.exited_abandoned.fetch_add(ts.abandoned);
}

// Back to the pool. Zeroed so the unwinder's search never matches a dead
// thread's entry; no libc call (probe_safe.h).
void free_state(ThreadState *ts) {
  ThreadPool &pool = g_thread_pool;
  uint32_t index = ts->index;
  probe_safe::fill_bytes(ts, 0, sizeof *ts);
  if (t_thread_state == ts)
    t_thread_state = nullptr;
  pool.used[index / 64].fetch_and(~(uint64_t{1} << (index % 64)),
                                  std::memory_order_release);
}

uint64_t stack_pointer() {
  uint64_t sp;
  __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
  return sp;
}

// The thread-exit destructor. Runs on the exiting thread, among the
// program's own exit code, whose calls hooks may trace.
void release_at_exit(void *p) {
  auto *ts = static_cast<ThreadState *>(p);
  t_thread_exiting = true;
  if (ts->seq & 1)
    return; // cannot happen (no dispatch calls into thread exit): keep it
  // Entries of frames below this one are dead: they returned or were
  // jumped over.
  const uint64_t sp = stack_pointer();
  uint32_t k = ts->depth;
  while (k > 0 && ts->shadow[k - 1].slot < sp)
    --k;
  ts->depth = k;
  fold_counters(*ts);
  ts->nested_skips = ts->shadow_overflows = ts->vector_skips =
      ts->unwound_entries = ts->abandoned = 0;
  if (k == 0) {
    free_state(ts);
    return;
  }
  // A hooked frame above still returns through its stub (one that runs the
  // thread's exit, or its start routine, which never returns): keep the
  // state for it; the return that empties the shadow stack frees it.
  ts->transient = 1;
  g_thread_pool.kept_at_exit.fetch_add(1, std::memory_order_relaxed);
}

// fork(): the child's only thread is a copy of the forking one; the states
// of the parent's other threads are nobody's in the child.
void on_fork_child() {
  ThreadPool &pool = g_thread_pool;
  uint32_t n = pool.high_water.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i) {
    if (!in_use(pool, i, std::memory_order_relaxed))
      continue;
    ThreadState *ts = &pool.states[i];
    if (ts != t_thread_state)
      free_state(ts);
  }
  // The child's thread has an id of its own now.
  if (ThreadState *ts = t_thread_state)
    if (const volatile int32_t *word = helpers::thread_id_word())
      ts->owner_tid = *word;
}

} // namespace

bool init_thread_pool() {
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  ThreadPool &pool = g_thread_pool;
  if (pool.states)
    return true;
  size_t bytes = sizeof(ThreadState) * kMaxThreads;
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return false;
  helpers::prepare_thread_identity();
  if (pthread_key_create(&g_exit_key, release_at_exit) == 0)
    g_key_usable = g_exit_key < kKeysWithoutAllocation;
  pthread_atfork(nullptr, nullptr, on_fork_child);
  pool.states = static_cast<ThreadState *>(p);
  return true;
}

// Frees the states whose owner is gone (see thread_state.h). Only when the
// pool is full: a scan of the pool, one fault-safe read per state.
uint32_t reap_gone_owners() {
  ThreadPool &pool = g_thread_pool;
  const helpers::SafeReader reader;
  uint32_t freed = 0;
  uint32_t n = pool.high_water.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; ++i) {
    if (!in_use(pool, i))
      continue;
    ThreadState *ts = &pool.states[i];
    uint64_t word = __atomic_load_n(&ts->owner_word, __ATOMIC_ACQUIRE);
    if (!word || ts == t_thread_state ||
        (__atomic_load_n(&ts->seq, __ATOMIC_ACQUIRE) & 1))
      continue;
    int32_t now = 0;
    if (reader.copy(&now, reinterpret_cast<const void *>(word), sizeof now) ==
            sizeof now &&
        now == ts->owner_tid)
      continue; // alive (or its id reused by a thread in its descriptor)
    // Gone: it runs nothing any more. One reaper wins.
    if (!__atomic_compare_exchange_n(&ts->owner_word, &word, uint64_t{0}, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      continue;
    fold_counters(*ts);
    free_state(ts);
    ++freed;
  }
  pool.reaped.fetch_add(freed, std::memory_order_relaxed);
  return freed;
}

ThreadState *take_free_state() {
  ThreadPool &pool = g_thread_pool;
  for (uint32_t w = 0; w < kMaxThreads / 64; ++w) {
    uint64_t bits = pool.used[w].load(std::memory_order_relaxed);
    while (bits != ~uint64_t{0}) {
      uint32_t bit = static_cast<uint32_t>(__builtin_ctzll(~bits));
      if (!pool.used[w].compare_exchange_weak(bits, bits | (uint64_t{1} << bit),
                                              std::memory_order_acquire))
        continue;
      uint32_t index = w * 64 + bit;
      ThreadState *ts = &pool.states[index];
      ts->index = index;
      ts->depth = 0;
      ts->transient = t_thread_exiting || !g_key_usable;
      const volatile int32_t *word = helpers::thread_id_word();
      ts->owner_tid = word ? *word : 0;
      __atomic_store_n(&ts->owner_word, reinterpret_cast<uint64_t>(word),
                       __ATOMIC_RELEASE);
      uint32_t hw = pool.high_water.load(std::memory_order_relaxed);
      while (hw < index + 1 &&
             !pool.high_water.compare_exchange_weak(hw, index + 1))
        ;
      // Set before pthread_setspecific, and seq odd around it: if that is
      // hooked, the nested dispatch finds the state busy and skips.
      t_thread_state = ts;
      if (!ts->transient) {
        store_relaxed(ts->seq, ts->seq | 1);
        pthread_setspecific(g_exit_key, ts);
        store_relaxed(ts->seq, ts->seq + 1);
      }
      return ts;
    }
  }
  return nullptr;
}

ThreadState *claim_thread_state() {
  ThreadPool &pool = g_thread_pool;
  if (!pool.states)
    return nullptr;
  if (ThreadState *ts = take_free_state())
    return ts;
  if (reap_gone_owners() > 0)
    if (ThreadState *ts = take_free_state())
      return ts;
  pool.refused.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

namespace {
bool live_by_read(const helpers::SafeReader &reader, const ShadowEntry &e,
                  uint32_t k) {
  if (is_tombstone(e))
    return false;
  uint64_t at = 0;
  if (reader.copy(&at, reinterpret_cast<const void *>(e.slot), sizeof at) !=
      sizeof at)
    return false;
  return at == return_stub(k, true) || at == return_stub(k, false);
}
} // namespace

bool entry_is_live(const ThreadState *ts, uint32_t k) {
  const helpers::SafeReader reader;
  return live_by_read(reader, ts->shadow[k], k);
}

bool live_entry_above(const ThreadState *ts, uint32_t k) {
  const helpers::SafeReader reader;
  for (uint32_t j = k + 1; j < ts->depth && j < kShadowDepth; ++j)
    if (live_by_read(reader, ts->shadow[j], j))
      return true;
  return false;
}

void release_transient_state(ThreadState *ts) {
  fold_counters(*ts);
  free_state(ts);
}

ThreadCounters thread_counters() {
  ThreadPool &pool = g_thread_pool;
  ThreadCounters c;
  c.nested_skips = pool.exited_nested_skips.load();
  c.shadow_overflows = pool.exited_shadow_overflows.load();
  c.vector_skips = pool.exited_vector_skips.load();
  c.unwound_entries = pool.exited_unwound_entries.load();
  c.abandoned = pool.exited_abandoned.load();
  c.abandoned_waits = pool.abandoned_waits.load();
  c.refused_claims = pool.refused.load();
  c.kept_at_exit = pool.kept_at_exit.load();
  c.reaped = pool.reaped.load();
  c.threads_seen = pool.high_water.load();
  if (!pool.states)
    return c;
  for (uint32_t i = 0; i < c.threads_seen; ++i) {
    if (!in_use(pool, i))
      continue;
    const ThreadState &ts = pool.states[i];
    c.nested_skips += load_relaxed(ts.nested_skips);
    c.shadow_overflows += load_relaxed(ts.shadow_overflows);
    c.vector_skips += load_relaxed(ts.vector_skips);
    c.unwound_entries += load_relaxed(ts.unwound_entries);
    c.abandoned += load_relaxed(ts.abandoned);
  }
  return c;
}

namespace {
// CPU time a thread spends with seq odd and unmoved before uninstall judges
// its dispatch left (a probe runs in microseconds; the interpreter's
// instruction budget ends a run long before this).
constexpr int64_t kAbandonedAfterCpuNs = 1'000'000'000;

} // namespace

void wait_for_running_dispatches() {
  ThreadPool &pool = g_thread_pool;
  if (!pool.states)
    return;
  barrier_all();
  uint32_t n = pool.high_water.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; ++i) {
    ThreadState *ts = &pool.states[i];
    if (ts == t_thread_state)
      continue; // a handler removing hooks: its own dispatch is not waited on
    uint64_t seq = __atomic_load_n(&ts->seq, __ATOMIC_ACQUIRE);
    if (!(seq & 1))
      continue;
    // A thread stopped in a handler (SIGSTOP, a debugger) is waited for;
    // one that runs on without moving seq left its dispatch for good (a
    // signal handler's longjmp): its handler never runs again.
    const int32_t tid = ts->owner_tid;
    const int64_t start = probe_safe::thread_cpu_ns(tid);
    for (uint32_t yields = 1;
         __atomic_load_n(&ts->seq, __ATOMIC_ACQUIRE) == seq; ++yields) {
      sched_yield();
      if (yields % 256 != 0 || start < 0)
        continue;
      const int64_t now = probe_safe::thread_cpu_ns(tid);
      if (now < 0)
        break; // gone
      if (now - start >= kAbandonedAfterCpuNs) {
        pool.abandoned_waits.fetch_add(1, std::memory_order_relaxed);
        break;
      }
    }
  }
}

__thread bool t_thread_excluded __attribute__((tls_model("initial-exec"))) =
    false;

void exclude_current_thread() {
  t_thread_excluded = true;
}

namespace {
int64_t offset_from_thread_pointer(const void *variable) {
  uint64_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp)); // glibc's TCB points at itself
  return static_cast<int64_t>(reinterpret_cast<uint64_t>(variable) - tp);
}
} // namespace

int64_t thread_state_tls_offset() {
  return offset_from_thread_pointer(&t_thread_state);
}
int64_t thread_excluded_tls_offset() {
  return offset_from_thread_pointer(&t_thread_excluded);
}

uint32_t current_shadow_depth() {
  ThreadState *ts = t_thread_state;
  return ts ? ts->depth : 0;
}

const uint64_t *return_entry_args() {
  ThreadState *ts = t_thread_state;
  return ts ? ts->returning_args : nullptr;
}

} // namespace ubtrace::runtime::hook
