// The dispatcher the trampolines call. Compiled with -mgeneral-regs-only:
// when a handler promises not to touch vector state, nothing on the way to
// it does either. No allocation, no locks, no exceptions, no guard
// variables; async-signal-safe (the trap path calls it from a signal
// handler).
#include "runtime/hook/cpu_features.h"
#include "runtime/hook/return_stubs.h"
#include "runtime/hook/site_bindings.h"
#include "runtime/hook/thread_state.h"
#include "runtime/hook/vector_moves.h"
#include "runtime/probe_safe.h"

#include <csignal>
#include <unistd.h>

namespace ubtrace::runtime::hook {
namespace {

[[noreturn]] void fatal(const char *message) {
  size_t n = 0;
  while (message[n])
    ++n;
  ssize_t ignored = write(2, message, n);
  (void)ignored;
  __builtin_trap(); // <stdlib.h> (abort) cannot be included here
}

// Runs f, which calls code built with vector registers allowed (libc's
// pthread_setspecific at a claim; fault-safe reads of other stacks), with
// the traced code's vector state kept around it. Rare paths only.
template <class F> auto keeping_vector_state(F f) {
  const CpuFeatures &cpu = detected_cpu_features();
  alignas(64) uint8_t area[4096 + 64];
  bool xsave = cpu.save_insn != VectorSaveInsn::Fxsave &&
               cpu.save_area_size <= sizeof area;
  uint32_t lo = static_cast<uint32_t>(cpu.xsave_mask);
  uint32_t hi = static_cast<uint32_t>(cpu.xsave_mask >> 32);
  if (xsave) {
    // XRSTOR faults unless the header's reserved bytes are zero, and
    // neither form writes all of them. Volatile stores: a plain loop could
    // become a call to memset, which uses vector registers before they are
    // saved.
    volatile uint64_t *header = reinterpret_cast<uint64_t *>(area + 512);
    for (int i = 0; i < 8; ++i)
      header[i] = 0;
    // XSAVEC skips the components in their initial state.
    if (cpu.save_insn == VectorSaveInsn::Xsavec)
      __asm__ volatile("xsavec64 (%0)" ::"r"(area), "a"(lo), "d"(hi)
                       : "memory");
    else
      __asm__ volatile("xsave64 (%0)" ::"r"(area), "a"(lo), "d"(hi) : "memory");
  } else {
    __asm__ volatile("fxsave64 (%0)" ::"r"(area) : "memory");
  }
  auto result = f();
  if (xsave)
    __asm__ volatile("xrstor64 (%0)" ::"r"(area), "a"(lo), "d"(hi) : "memory");
  else
    __asm__ volatile("fxrstor64 (%0)" ::"r"(area) : "memory");
  return result;
}

// Once per thread.
ThreadState *claim_keeping_vector_state() {
  return keeping_vector_state([] { return claim_thread_state(); });
}

inline void enter(ThreadState *ts, PtRegs *regs) {
  store_relaxed(ts->running_regs, reinterpret_cast<uint64_t>(regs));
  store_relaxed(ts->seq, ts->seq + 1);
  // Only the compiler must not sink the store below the binding load; the
  // remover's membarrier orders it for the CPU (thread_state.h).
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

// seq first: a signal handler that jumps out between the two stores must
// not leave seq odd with no dispatch named.
inline void leave(ThreadState *ts) {
  __atomic_store_n(&ts->seq, ts->seq + 1, __ATOMIC_RELEASE);
  store_relaxed(ts->running_regs, 0);
}

// Whether the thread runs on its alternate signal stack; true when it
// cannot tell (then nothing is judged abandoned).
bool on_alternate_stack() {
  stack_t ss;
  if (probe_safe::raw_syscall(SYS_sigaltstack, 0,
                              reinterpret_cast<long>(&ss)) != 0)
    return true;
  return ss.ss_flags & SS_ONSTACK;
}

// A hit found seq odd. Either a dispatch runs below it (a handler called a
// hooked function, or a signal handler interrupted the dispatch and calls
// one), or a signal handler's longjmp left a dispatch for good, after which
// every hit on the thread would be skipped and uninstall would wait for it
// forever. A dispatch that runs has its frame (running_regs) above any
// code it leads to on the same stack, so a hit whose own frame is at or
// above it, not on the signal stack (where a handler's frame lies anywhere),
// comes after the dispatch was left: seq is made even again and the hit
// runs. (Not told apart: a longjmp that lands deeper than the dispatch was,
// seq odd on the lean path, and a signal handler that switches to another
// context while a dispatch runs, which this takes for a longjmp.)
bool left_by_longjmp(ThreadState *ts, PtRegs *regs) {
  const uint64_t running = load_relaxed(ts->running_regs);
  if (running == 0 || reinterpret_cast<uint64_t>(regs) < running)
    return false;
  if (on_alternate_stack())
    return false;
  bump(ts->abandoned);
  leave(ts);
  return true;
}

inline void call(ThreadState *ts, const HandlerBinding *b, PtRegs *regs,
                 uint64_t vectors_saved) {
  if (!b)
    return;
  if (b->save_vectors && !vectors_saved) {
    // Bound after this hit's trampoline decided not to save: skip once.
    bump(ts->vector_skips);
    return;
  }
  b->fn(regs, b->user);
}

// An entry of a function that returns twice (setjmp, vfork, getcontext):
// its return stub is saved (in a jmp_buf, a ucontext, the vfork child's
// registers) and may be returned to again as long as its caller's frame
// lives, so the entry stays at its index ("pinned") on every return, until
// a return through an outer frame pops it.
inline bool pinned(const ShadowEntry &e) {
  return e.site && __atomic_load_n(&e.site->returns_twice, __ATOMIC_RELAXED);
}

// Entries at the top that are dead for a call whose return address is at
// `slot`: tombstones, frames below it (returned, or jumped over by
// longjmp) and frames at the same place, except pinned ones (a setjmp
// whose caller lives) and frames of another stack that still return
// through their stub (a coroutine's, see below).
inline bool dead_for(ThreadState *ts, uint32_t k, uint64_t slot) {
  const ShadowEntry &e = ts->shadow[k];
  if (is_tombstone(e))
    return true;
  if (!(e.slot < slot || (e.slot == slot && !pinned(e))))
    return false;
  return !keeping_vector_state([&] { return entry_is_live(ts, k); });
}

// Fills shadow entry k (and keeps the entry arguments where the site's
// return handler reads them); returns its stub.
inline uint64_t fill(ThreadState *ts, uint32_t k, const PtRegs *regs,
                     uint64_t return_address, SiteBindings *site,
                     bool save_vectors) {
  ShadowEntry &e = ts->shadow[k];
  e.slot = regs->rsp;
  e.return_address = return_address;
  e.site = site;
  if (__atomic_load_n(&site->entry_args, __ATOMIC_RELAXED)) {
    ThreadState::KeptArgs &kept = ts->entry_args[k];
    kept.regs[0] = regs->rdi;
    kept.regs[1] = regs->rsi;
    kept.regs[2] = regs->rdx;
    kept.regs[3] = regs->rcx;
    kept.regs[4] = regs->r8;
    kept.regs[5] = regs->r9;
    kept.slot = regs->rsp;
  }
  return return_stub(k, save_vectors);
}

// Drops tombstones at the top.
inline void shrink(ThreadState *ts) {
  uint32_t k = ts->depth;
  while (k > 0 && is_tombstone(ts->shadow[k - 1]))
    --k;
  ts->depth = k;
}

// Pushes the shadow entry; returns the return stub the function must return
// to, 0 when the shadow stack is full. rsp points at the return address (the
// site is a function entry). The caller puts the stub in place (the entry
// trampoline through the launch code, the trap path by writing it).
inline uint64_t arm_return(ThreadState *ts, PtRegs *regs, SiteBindings *site,
                           bool save_vectors) {
  uint64_t slot = regs->rsp;
  uint64_t return_address = *reinterpret_cast<uint64_t *>(slot);
  uint32_t k = ts->depth;
  if (__atomic_load_n(&site->returns_twice, __ATOMIC_RELAXED)) {
    // The same call again (setjmp in a loop: same frame, caller and site)
    // names the same continuation: reuse its entry rather than pile up.
    // Only above the live frames of outer callers.
    for (uint32_t j = k; j > 0 && ts->shadow[j - 1].slot <= slot; --j) {
      const ShadowEntry &e = ts->shadow[j - 1];
      if (e.slot == slot && e.return_address == return_address &&
          e.site == site)
        return return_stub(j - 1, save_vectors);
    }
  }
  if (k == kShadowDepth) {
    // Full: drop the dead entries at the top. Done only when full so a
    // signal handler on an alternate stack higher up cannot drop live ones
    // in the common case.
    while (k > 0 && dead_for(ts, k - 1, slot))
      --k;
    ts->depth = k;
    if (k == kShadowDepth) {
      // Still full: coroutines interleave live frames with tombstones.
      // The lowest tombstone takes the entry (any index works: the stub
      // names it).
      uint32_t hole = 0;
      while (hole < kShadowDepth && !is_tombstone(ts->shadow[hole]))
        ++hole;
      if (hole == kShadowDepth) {
        bump(ts->shadow_overflows);
        return 0;
      }
      return fill(ts, hole, regs, return_address, site, save_vectors);
    }
  }
  ts->depth = k + 1;
  return fill(ts, k, regs, return_address, site, save_vectors);
}

// What the return through stub k leaves of the shadow stack, its function
// having returned to `slot` + 8.
//  * An ordinary function: entries above k are frames it called that never
//    returned (jumped over by longjmp): popped with it. Except frames of
//    another stack that still return through their stub: a coroutine
//    (makecontext/swapcontext) switched away from inside them, and they
//    return later; then k becomes a tombstone and nothing moves (indices
//    are what the stubs name).
//  * A pinned one (setjmp): stays, with the pinned entries right above it
//    at the same slot (_setjmp tail-calls __sigsetjmp: both saved
//    continuations stay valid); what longjmp jumped over goes.
inline void pop_after_return(ThreadState *ts, uint32_t k, uint64_t slot) {
  if (pinned(ts->shadow[k])) {
    uint32_t top = k + 1;
    while (top < ts->depth && ts->shadow[top].slot == slot &&
           pinned(ts->shadow[top]))
      ++top;
    ts->depth = top;
    return;
  }
  if (k + 1 < ts->depth &&
      keeping_vector_state([&] { return live_entry_above(ts, k); })) {
    make_tombstone(ts->shadow[k]);
    return;
  }
  ts->depth = k;
  shrink(ts);
}

} // namespace

extern "C" uint64_t ubt_hook_dispatch_entry(PtRegs *regs, SiteBindings *site,
                                            uint64_t vectors_saved) {
  if (t_thread_excluded) [[unlikely]]
    return 0;
  ThreadState *ts = t_thread_state;
  if (!ts) [[unlikely]] {
    ts = claim_keeping_vector_state();
    if (!ts)
      return 0;
  }
  if ((ts->seq & 1) && !left_by_longjmp(ts, regs)) {
    bump(ts->nested_skips);
    return 0;
  }
  enter(ts, regs);
  call(ts, load_binding(site->entry), regs, vectors_saved);
  uint64_t stub = 0;
  if (const HandlerBinding *r = load_binding(site->ret))
    stub = arm_return(ts, regs, site, r->save_vectors);
  leave(ts);
  release_if_transient(ts);
  return stub;
}

// The entry trampoline of a site where any vector register may be live
// (not a function's entry) on a CPU that reports XINUSE: the trampoline
// saves nothing and the dispatch runs with the traced code's vector state
// kept by moves (vector_moves.h), when the handler asked for it.
extern "C" UBT_KEEPS_VECTORS uint64_t ubt_hook_dispatch_entry_keeping_vectors(
    PtRegs *regs, SiteBindings *site, uint64_t keep) {
  if (!keep)
    return ubt_hook_dispatch_entry(regs, site, 0);
  const CpuFeatures &cpu = detected_cpu_features();
  MovedVectors kept;
  vector_moves::save(kept, cpu);
  uint64_t stub = ubt_hook_dispatch_entry(regs, site, 1);
  vector_moves::restore(kept, cpu);
  return stub;
}

extern "C" uint64_t ubt_hook_dispatch_return(PtRegs *regs, uint64_t index,
                                             uint64_t vectors_saved) {
  ThreadState *ts = t_thread_state;
  if (!ts)
    fatal("ubtrace: return trampoline reached on a thread without hook "
          "state\n");
  uint64_t slot = regs->rsp - 8;
  uint32_t k = static_cast<uint32_t>(index);
  // The stub names its entry. Its slot must be where the return came from:
  // anything else is not the frame that entry was made for (a longjmp to
  // a frame that has returned, a stack switched by swapcontext), and
  // guessing another entry from the slot would resume the wrong caller.
  // A dropped entry whose record is intact (k at or above depth) is still
  // the right one.
  if (k >= kShadowDepth || ts->shadow[k].slot != slot)
    fatal("ubtrace: return hook lost the return address of a frame "
          "(stack switched by swapcontext?)\n");
  uint64_t return_address = ts->shadow[k].return_address;
  SiteBindings *site = ts->shadow[k].site;
  // Read before the pop: the row stays intact until index k is armed
  // again, which no hit can do while this dispatch runs (seq is odd).
  const uint64_t *kept = nullptr;
  if (__atomic_load_n(&site->entry_args, __ATOMIC_RELAXED) &&
      ts->entry_args[k].slot == slot)
    kept = ts->entry_args[k].regs;
  if (k < ts->depth)
    pop_after_return(ts, k, slot);
  regs->rip = return_address;
  if ((ts->seq & 1) && !left_by_longjmp(ts, regs)) {
    bump(ts->nested_skips);
    return return_address;
  }
  enter(ts, regs);
  ts->returning_args = kept;
  call(ts, load_binding(site->ret), regs, vectors_saved);
  ts->returning_args = nullptr;
  leave(ts);
  release_if_transient(ts);
  return return_address;
}

extern "C" bool ubt_hook_dispatch_signal(PtRegs *regs, Handler fn, void *user) {
  if (t_thread_excluded) [[unlikely]]
    return false;
  ThreadState *ts = t_thread_state;
  if (!ts) [[unlikely]] {
    ts = claim_thread_state(); // the kernel saved the vector state
    if (!ts)
      return false;
  }
  if ((ts->seq & 1) && !left_by_longjmp(ts, regs)) {
    bump(ts->nested_skips);
    return false;
  }
  enter(ts, regs);
  fn(regs, user);
  leave(ts);
  release_if_transient(ts);
  return true;
}

// For callers that reach a handler from code that saved no vector state
// (the system call fast path, runtime/agent/syscalls.h): the dispatch runs
// with the traced code's vector state kept around it, by moves where the
// CPU reports what is in use (vector_moves.h), else by XSAVE.
extern "C" UBT_KEEPS_VECTORS bool
ubt_hook_dispatch_keeping_vectors(PtRegs *regs, Handler fn, void *user) {
  const CpuFeatures &cpu = detected_cpu_features();
  if (!cpu.xinuse)
    return keeping_vector_state(
        [&] { return ubt_hook_dispatch_signal(regs, fn, user); });
  MovedVectors kept;
  vector_moves::save(kept, cpu);
  bool ran = ubt_hook_dispatch_signal(regs, fn, user);
  vector_moves::restore(kept, cpu);
  return ran;
}

} // namespace ubtrace::runtime::hook
