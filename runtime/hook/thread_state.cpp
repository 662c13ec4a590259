#include "runtime/hook/thread_state.h"

#include "runtime/hook/cpu_sync.h"
#include "runtime/hook/thread_pool.h"

#include <cstring>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

namespace ubtrace::runtime::hook {

ThreadPool g_thread_pool;
__thread ThreadState *t_thread_state
    __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

pthread_key_t g_exit_key;

void release(void *p) {
  auto *ts = static_cast<ThreadState *>(p);
  ThreadPool &pool = g_thread_pool;
  pool.exited_nested_skips.fetch_add(ts->nested_skips);
  pool.exited_shadow_overflows.fetch_add(ts->shadow_overflows);
  pool.exited_vector_skips.fetch_add(ts->vector_skips);
  pool.exited_unwound_entries.fetch_add(ts->unwound_entries);
  uint32_t index = ts->index;
  // Zeroed so the unwinder's search never matches a dead thread's entry.
  memset(ts, 0, sizeof *ts);
  if (t_thread_state == ts)
    t_thread_state = nullptr;
  pool.used[index / 64].fetch_and(~(uint64_t{1} << (index % 64)),
                                  std::memory_order_release);
}

} // namespace

bool init_thread_pool() {
  ThreadPool &pool = g_thread_pool;
  if (pool.states)
    return true;
  size_t bytes = sizeof(ThreadState) * kMaxThreads;
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return false;
  if (pthread_key_create(&g_exit_key, release) != 0) {
    munmap(p, bytes);
    return false;
  }
  pool.states = static_cast<ThreadState *>(p);
  return true;
}

ThreadState *claim_thread_state() {
  ThreadPool &pool = g_thread_pool;
  if (!pool.states)
    return nullptr;
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
      uint32_t hw = pool.high_water.load(std::memory_order_relaxed);
      while (hw < index + 1 &&
             !pool.high_water.compare_exchange_weak(hw, index + 1))
        ;
      // Set before pthread_setspecific: if that were hooked, the nested
      // dispatch finds the state instead of claiming again.
      t_thread_state = ts;
      pthread_setspecific(g_exit_key, ts);
      return ts;
    }
  }
  pool.refused.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

ThreadCounters thread_counters() {
  ThreadPool &pool = g_thread_pool;
  ThreadCounters c;
  c.nested_skips = pool.exited_nested_skips.load();
  c.shadow_overflows = pool.exited_shadow_overflows.load();
  c.vector_skips = pool.exited_vector_skips.load();
  c.unwound_entries = pool.exited_unwound_entries.load();
  c.refused_claims = pool.refused.load();
  c.threads_seen = pool.high_water.load();
  if (!pool.states)
    return c;
  for (uint32_t i = 0; i < c.threads_seen; ++i) {
    if (!(pool.used[i / 64].load() & (uint64_t{1} << (i % 64))))
      continue;
    const ThreadState &ts = pool.states[i];
    c.nested_skips += load_relaxed(ts.nested_skips);
    c.shadow_overflows += load_relaxed(ts.shadow_overflows);
    c.vector_skips += load_relaxed(ts.vector_skips);
    c.unwound_entries += load_relaxed(ts.unwound_entries);
  }
  return c;
}

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
    while (__atomic_load_n(&ts->seq, __ATOMIC_ACQUIRE) == seq)
      sched_yield();
  }
}

__thread bool t_thread_excluded __attribute__((tls_model("initial-exec"))) = false;

void exclude_current_thread() { t_thread_excluded = true; }

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

} // namespace ubtrace::runtime::hook
