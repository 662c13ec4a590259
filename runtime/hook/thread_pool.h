// The pool of per-thread hook states (see thread_state.h).
#pragma once

#include "runtime/hook/thread_state.h"

#include <atomic>
#include <cstdint>

namespace ubtrace::runtime::hook {

struct ThreadPool {
  ThreadState *states = nullptr; // kMaxThreads of them
  std::atomic<uint64_t> used[kMaxThreads / 64] = {};
  std::atomic<uint32_t> high_water{0}; // 1 + highest index ever claimed
  std::atomic<uint64_t> refused{0};    // claims that found the pool full
  // Exited threads whose state stayed claimed: a hooked frame above the
  // exit destructor had not returned (see thread_state.h).
  std::atomic<uint64_t> kept_at_exit{0};
  // States of threads found gone by a claim that found the pool full.
  std::atomic<uint64_t> reaped{0};
  // Counters of threads that have exited.
  std::atomic<uint64_t> exited_nested_skips{0};
  std::atomic<uint64_t> exited_shadow_overflows{0};
  std::atomic<uint64_t> exited_vector_skips{0};
  std::atomic<uint64_t> exited_unwound_entries{0};
  std::atomic<uint64_t> exited_abandoned{0};
  // Uninstalls that stopped waiting for a thread whose dispatch a longjmp
  // left (thread_state.h).
  std::atomic<uint64_t> abandoned_waits{0};
};

extern ThreadPool g_thread_pool;

// Whether state i of the pool is claimed.
inline bool in_use(const ThreadPool &pool, uint32_t i,
                   std::memory_order order = std::memory_order_acquire) {
  return pool.used[i / 64].load(order) & (uint64_t{1} << (i % 64));
}

// Maps the pool, creates the thread-exit key and registers the fork
// handler. Off the probe path (the agent's start, or the first install);
// idempotent.
bool init_thread_pool();

// Sum of the counters over live and exited threads.
struct ThreadCounters {
  uint64_t nested_skips = 0;
  uint64_t shadow_overflows = 0;
  uint64_t vector_skips = 0;
  uint64_t unwound_entries = 0;
  uint64_t abandoned = 0; // dispatches a signal handler's longjmp left
  uint64_t abandoned_waits = 0;
  uint64_t refused_claims = 0;
  uint64_t kept_at_exit = 0;
  uint64_t reaped = 0;
  uint32_t threads_seen = 0; // high-water mark of claimed states
};
ThreadCounters thread_counters();

// Waits until no dispatch that could have loaded a binding before this call
// is still running on another thread (see thread_state.h).
void wait_for_running_dispatches();

} // namespace ubtrace::runtime::hook
