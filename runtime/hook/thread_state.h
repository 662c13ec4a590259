// Per-thread hook state: the dispatch guard and the return-address shadow
// stack. (The pool that holds the states is in thread_pool.h; this header is
// light enough for the general-registers-only dispatcher.)
//
// States live in one preallocated pool (mapped by prepare_thread_states(),
// pages touched only as threads claim them); a thread claims one the first
// time a hook fires on it (lock-free, no allocation, async-signal-safe) and
// a pthread key destructor releases it when the thread exits. The pool is one
// array at a fixed address because the unwind info of the return trampoline
// (unwind_info.h) searches it with a DWARF expression.
//
// Nothing that claims or releases a state calls a function that may be
// hooked (probe_safe.h), with one audited exception: the claim's
// pthread_setspecific, which for a key below 32 (PTHREAD_KEY_2NDLEVEL_SIZE)
// only stores into the thread's descriptor, and which runs with seq odd so
// that a hook on it is a nested skip. The release runs on the exiting
// thread, where hooks may still fire (the program's own thread-exit code
// calls hooked functions after our destructor): it zeroes the state with
// its own loop, and keeps it while a frame above still returns through a
// stub (a hooked function that is running the thread's exit). A thread that
// hits a hook after its state was released, or any thread when the key is
// 32 or above (pthread_setspecific would allocate), gets a transient state:
// released again at the end of the dispatch that leaves no return armed.
//
// seq is odd while a dispatch runs on the thread. It is the reentrancy
// guard (a handler that calls a hooked function, or a signal handler that
// does, is not traced again) and what uninstall waits on: it stores the
// binding pointer null, runs barrier_all() (membarrier), then waits for every
// odd seq to move, except on a thread that runs on (uses a second of CPU)
// without moving it: a signal handler's longjmp left its dispatch, whose
// handler will never run again. The hot path's plain store to seq followed by
// the load of the binding is ordered against the remover by that membarrier (an
// asymmetric fence), so a dispatch either sees null or is waited for.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::hook {

struct SiteBindings;

// The kernel's uretprobe depth limit is 64 as well.
inline constexpr uint32_t kShadowDepth = 64;
// Live threads with hook state at once (of the process); the pool reserves
// address space for all of them (5.7 KiB each), memory as threads claim
// (the entry-argument rows only where return handlers keep them).
inline constexpr uint32_t kMaxThreads = 16384;

// Argument registers a return hook may keep from its function's entry.
inline constexpr uint32_t kEntryArgRegs = 6;

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
  uint64_t abandoned;        // dispatches a signal handler jumped out of
  // The PtRegs of the dispatch the C dispatcher runs (it is on the thread's
  // stack), 0 between dispatches and on the lean path: a hit that finds seq
  // odd with its own frame at or above it, on the same stack, comes after a
  // longjmp out of that dispatch (dispatch.cpp).
  uint64_t running_regs;
  // Released as soon as no return is armed (see above), not at thread exit.
  uint32_t transient;
  // The owner: its id and the word of glibc's thread descriptor that holds
  // it until the thread is gone (helpers/thread_identity.h). A claim that
  // finds the pool full reaps the states whose owner is gone: a state kept
  // at exit for a frame that never returns (a return probe on the thread's
  // start routine), a thread that ended without its destructors (a raw exit
  // system call).
  int32_t owner_tid;
  uint64_t owner_word;
  // The entry arguments of the return being dispatched (entry_args[k]), 0
  // otherwise: what return_entry_args() (hook.h) hands the handler.
  const uint64_t *returning_args;
  ShadowEntry shadow[kShadowDepth];
  // The argument registers (rdi, rsi, rdx, rcx, r8, r9) at the entry of
  // shadow[k]'s function, kept for sites whose return handler reads them
  // (SiteBindings::entry_args), and the shadow entry's slot they were kept
  // for: a row whose slot differs is another call's. Last, so a thread
  // that never keeps any never touches these pages.
  struct alignas(64) KeptArgs {
    uint64_t regs[kEntryArgRegs];
    uint64_t slot;
  } entry_args[kShadowDepth];
};

inline constexpr uint32_t kShadowOffset = offsetof(ThreadState, shadow);

// An entry whose frame returned while entries above it live on (another
// stack's: a coroutine's). Its index stays taken until they pop.
inline bool is_tombstone(const ShadowEntry &e) {
  return e.slot == 0;
}
inline void make_tombstone(ShadowEntry &e) {
  e.slot = 0;
  e.site = nullptr;
}

// Whether the frame of entry k still returns through its stub: its return
// address slot holds the stub that names k (read fault-safely: a
// coroutine's stack may be gone). Entries above k: whether any is so.
// Built with vector registers allowed: the dispatcher wraps the calls.
bool entry_is_live(const ThreadState *ts, uint32_t k);
bool live_entry_above(const ThreadState *ts, uint32_t k);

// initial-exec: a dlopen'ed agent would otherwise pay __tls_get_addr on
// every hit. One pointer fits glibc's static TLS surplus.
extern __thread ThreadState *t_thread_state
    __attribute__((tls_model("initial-exec")));

// Set on threads that hooks ignore (exclude_current_thread, hook.h).
extern __thread bool t_thread_excluded
    __attribute__((tls_model("initial-exec")));

// Where t_thread_state and t_thread_excluded are relative to the thread
// pointer (fs). Initial-exec TLS lives in the static TLS block, at the same
// offset in every thread, so generated code can read them as fs:[offset].
int64_t thread_state_tls_offset();
int64_t thread_excluded_tls_offset();

// Claims a state for the calling thread; null when the pool is full or not
// set up. May call pthread_setspecific (may touch vector registers).
ThreadState *claim_thread_state();

// A transient state with no return armed goes back to the pool (the end of
// a dispatch, or of an unwind; see above). Async-signal-safe.
void release_transient_state(ThreadState *ts);
inline void release_if_transient(ThreadState *ts) {
  if (ts->transient && ts->depth == 0 && !(ts->seq & 1)) [[unlikely]]
    release_transient_state(ts);
}

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
