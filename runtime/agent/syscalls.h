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
// Cost: a signal per system call of the process while any system call
// probe is attached (~2 us here); rewriting the `syscall` sites of loaded
// code to jump to the probes directly is the fast path still to come.
#pragma once

#include "runtime/hook/pt_regs.h"
#include "runtime/result.h"

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
bool active();

// The preload's view: SIGSYS must stay deliverable while active.
int blocked_signal();
// A program's sigaction() on SIGSYS once ours is in.
bool filter_sigaction(int sig, const struct sigaction *act,
                      struct sigaction *old);
// An agent thread: never dispatched (its system calls are ubtrace's).
void agent_thread_started();

struct Counters {
  uint64_t calls = 0;            // system calls intercepted
  uint64_t untraced_threads = 0; // threads that never turned dispatch on
  uint64_t clones_refused = 0;   // clone calls with no stub left: failed
                                 // with EAGAIN
  bool sandboxed = false;        // the program installed a seccomp filter:
                                 // tracing stopped there
};
Counters counters();

} // namespace ubtrace::agent::syscalls
