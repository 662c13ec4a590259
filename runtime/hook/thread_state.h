// Per-thread hook state: the dispatch guard and the return-address shadow
// stack. (The pool that holds the states is in thread_pool.h; this header is
// light enough for the general-registers-only dispatcher.)
//
// States live in one preallocated pool (mapped at the first install, pages
// touched only as threads claim them); a thread claims one the first time a
// hook fires on it (lock-free, no allocation, async-signal-safe) and a
// pthread key destructor releases it when the thread exits. The pool is one
// array at a fixed address because the unwind info of the return trampoline
// (unwind_info.h) searches it with a DWARF expression.
//
// seq is odd while a dispatch runs on the thread. It is the reentrancy
// guard (a handler that calls a hooked function, or a signal handler that
// does, is not traced again) and what uninstall waits on: it stores the
// binding pointer null, runs barrier_all() (membarrier), then waits for every
// odd seq to move. The hot path's plain store to seq followed by the load of
// the binding is ordered against the remover by that membarrier (an
// asymmetric fence), so a dispatch either sees null or is waited for.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::hook {

struct SiteBindings;

// The kernel's uretprobe depth limit is 64 as well.
inline constexpr uint32_t kShadowDepth = 64;
inline constexpr uint32_t kMaxThreads = 4096;

struct ShadowEntry {
  uint64_t slot;           // where the return address is (rsp at entry)
  uint64_t return_address; // the real one
  SiteBindings *site;
};
static_assert(sizeof(ShadowEntry) == 24);

struct alignas(64) ThreadState {
  uint64_t seq;
  uint32_t depth; // live entries of shadow[]
  uint32_t index; // in the pool
  // Counters, written by the owner only.
  uint64_t nested_skips;     // a dispatch was already running
  uint64_t shadow_overflows; // return not traced: shadow stack full
  uint64_t vector_skips;     // handler wanted vector state saved, was not
  uint64_t unwound_entries;  // dropped by an exception unwinding through
  ShadowEntry shadow[kShadowDepth];
};

inline constexpr uint32_t kShadowOffset = offsetof(ThreadState, shadow);

// initial-exec: a dlopen'ed agent would otherwise pay __tls_get_addr on
// every hit. One pointer fits glibc's static TLS surplus.
extern __thread ThreadState *t_thread_state
    __attribute__((tls_model("initial-exec")));

// Set on threads that hooks ignore (exclude_current_thread, hook.h).
extern __thread bool t_thread_excluded __attribute__((tls_model("initial-exec")));

// Where t_thread_state and t_thread_excluded are relative to the thread
// pointer (fs). Initial-exec TLS lives in the static TLS block, at the same
// offset in every thread, so generated code can read them as fs:[offset].
int64_t thread_state_tls_offset();
int64_t thread_excluded_tls_offset();

// Claims a state for the calling thread; null when the pool is full or not
// set up. Calls pthread_setspecific (may touch vector registers).
ThreadState *claim_thread_state();

// The calling thread's shadow stack depth (0 without a state).
uint32_t current_shadow_depth();

// Relaxed accessors: the fields are shared with readers on other threads.
inline uint64_t load_relaxed(const uint64_t &v) {
  return __atomic_load_n(&v, __ATOMIC_RELAXED);
}
inline void store_relaxed(uint64_t &v, uint64_t x) {
  __atomic_store_n(&v, x, __ATOMIC_RELAXED);
}
inline void bump(uint64_t &counter) {
  store_relaxed(counter, load_relaxed(counter) + 1);
}

} // namespace ubtrace::runtime::hook
