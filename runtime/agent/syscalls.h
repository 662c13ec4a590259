// tracepoint:syscalls:* and tracepoint:raw_syscalls:* inside the traced
// process: every system call its threads make, whatever code makes it
// (libc's wrappers, inline `syscall` instructions, static helpers, code
// that never heard of libc), without ptrace or the kernel's tracepoints.
//
// Mechanism: Syscall User Dispatch (prctl PR_SET_SYSCALL_USER_DISPATCH,
// Linux 5.11). Each thread of the process turns it on for itself with a
// selector byte of its own (a table indexed by tid); while the byte says
// BLOCK, the kernel turns every system call made outside one exempt range
// into a SIGSYS (si_code SYS_USER_DISPATCH) before running it. Our handler
// (chained in front of the program's, runtime/helpers/signal_chain.h) sets
// the byte to ALLOW, runs the entry probes with the thread's registers,
// makes the call itself from the exempt range, stores its result in the
// thread's context, runs the exit probes, sets BLOCK again and returns
// through an rt_sigreturn that is itself in the exempt range. The exempt
// range is a few pages of our code, mapped twice from a memfd (executable,
// and writable for the clone stubs below), never writable and executable
// at once.
//
// Calls that cannot run from inside the handler:
//  * rt_sigreturn (the program's own signal handlers returning): the
//    thread is sent to the exempt rt_sigreturn code with its own stack;
//  * clone, clone3, fork and vfork: a child that shares the stack, or
//    starts on a new one, must not come back through our signal frame.
//    The thread is sent to a stub for that call site in the exempt range
//    (`syscall; child? turn dispatch on; jmp back`), so parent and child
//    both return where the program's call was; the child turns dispatch on
//    for itself first (the kernel never copies it to a new task), so new
//    threads, raw clone() ones included, and forked children are traced
//    from their first instruction. Their sys_exit is not seen.
//  * rt_sigprocmask: made on the mask the handler's return restores (the
//    context's), so the program's change outlives the handler.
// SIGSYS must never be blocked on a thread with dispatch on (the kernel
// would kill it at its next system call): the preload keeps it out of the
// masks the program sets through libc, the handler strips it from raw
// rt_sigprocmask and rt_sigaction masks, and handlers installed before
// tracing starts have it taken out of their sa_mask.
//
// Threads alive when tracing starts are asked to turn dispatch on by a
// SIGSYS of ours (rt_tgsigqueueinfo with a cookie); a thread that blocks
// SIGSYS then is left alone and counted. Stopping sets every selector to
// ALLOW: system calls run untouched from that instant, on every thread,
// whatever it blocks.
//
// Fast path: rewritten sites. Each call site the handler serves is noted
// (a lock-free table); the agent's thread then rewrites its `syscall`
// instruction into a jump to a trampoline (runtime/hook/hook.h,
// install_syscall_site) that calls ubt_syscalls_fast (syscall_fast.cpp):
// it runs the probes and makes the call from the exempt range, with no
// signal. Lazy rewriting finds the sites that matter (the ones that run)
// wherever they are, with dispatch as the net for every other: code not
// yet rewritten, code that cannot be (a site whose following bytes hold a
// branch target or end the function, no FDE to bound its function, code
// the program may unmap: libraries it may dlclose, JIT code), the calls
// the handler must adjust (the clone family, rt_sigreturn, rt_sigprocmask,
// rt_sigaction, seccomp, prctl), which the trampoline runs as the program
// wrote them, and threads whose id the fast path cannot tell without a
// system call (a vfork child). The rewrites come out at detach
// (restore_sites); their trampolines stay, inert.
//
// Cost: a signal per call at a site not rewritten (~2 us here); at a
// rewritten site, bench/RESULTS.md.
#pragma once

#include "runtime/hook/planner.h"
#include "runtime/hook/pt_regs.h"
#include "runtime/result.h"

#include <cstddef>
#include <cstdint>
#include <signal.h>

namespace ubtrace::agent::syscalls {

// Runs the probes of system call `nr` at its entry (exit false: regs as
// the call was made, orig_rax = nr) or exit (rax = the result).
using Handler = void (*)(runtime::hook::PtRegs *regs, int nr, bool exit);

struct Started {
  uint32_t threads = 0; // threads dispatching now
  uint32_t blocked = 0; // threads left alone: they block SIGSYS
};

// Starts intercepting every system call of every thread, calling fn for
// those `want` says. Agent thread; a second call only returns the counts.
Result<Started> start(Handler fn);
// Asks for probes at system call nr (-1: every one) at entry or exit.
void want(int nr, bool exit);
// Every system call runs untouched from now on.
void stop();
// What the agent knows of the code at a call site.
struct SiteFacts {
  bool permanent = false; // mapped as long as the process
  bool abi_calls = false; // its functions are only called as the ABI says
                          // (libc and the loader): one that touches no
                          // vector register needs none saved
};
// The agent's thread: rewrites the sites noted since the last call, those
// in permanent code. Returns how many.
size_t rewrite_sites(SiteFacts (*facts)(uint64_t site));
// The agent's thread, after stop(): puts the instructions back.
void restore_sites();
// The bounds of the function holding `pc`, from its FDE in .eh_frame (as
// the unwinder finds it): {0, 0} when none covers it.
runtime::hook::FunctionBounds function_of(uint64_t pc);
bool active();

// A system call the program asked for that the agent answered without the
// kernel (the preload's sigaction() on a signal ubtrace handles): its
// probes run on the calling thread as for a call made (entry, then exit
// with `result`), when the thread is traced.
void answered(int nr, const long args[6], long result);
// The preload's view: SIGSYS must stay deliverable while active.
int blocked_signal();
// A program's sigaction() on SIGSYS once ours is in.
bool filter_sigaction(int sig, const struct sigaction *act,
                      struct sigaction *old);
// An agent thread: never dispatched (its system calls are ubtrace's).
void agent_thread_started();

// Agent work on a program thread (the preload's constructor around the
// session's start, a raw notice to the CLI, the exit report): while one
// lives, the thread's selector stays ALLOW, so its system calls are not
// taken for the program's; the last one to end puts back what the thread
// should be at (BLOCK once dispatch is on for it, even if it was turned
// on meanwhile). Nests; no system call, no libc.
class OwnCalls {
public:
  OwnCalls();
  ~OwnCalls();
  OwnCalls(const OwnCalls &) = delete;
  OwnCalls &operator=(const OwnCalls &) = delete;
};

struct Counters {
  uint64_t calls = 0;              // system calls intercepted
  uint64_t untraced_threads = 0;   // threads that never turned dispatch on
  uint64_t clones_refused = 0;     // clone calls with no stub left: failed
                                   // with EAGAIN
  uint64_t child_exits_unseen = 0; // CLONE_VM children without a TLS of
                                   // their own: exit probes not run
  bool sandboxed = false;          // the program installed a seccomp filter:
                                   // tracing stopped there
  uint64_t sites_rewritten = 0;    // call sites on the fast path
  uint64_t sites_kept = 0;         // call sites left to dispatch
};
Counters counters();

} // namespace ubtrace::agent::syscalls
