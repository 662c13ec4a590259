// The program's signal handlers while system call probes run (syscalls.h).
//
// A thread's dispatch selector is ALLOW while agent code runs on it
// (probes, fault-safe reads). A program signal that lands there runs the
// program's handler at ALLOW: its system calls go untraced, and a handler
// that leaves by siglongjmp (a timeout pattern) leaves the selector at
// ALLOW for good, so that thread's calls are never traced again, silently.
// So while the probes run, every handler of the program is entered through
// ubt_program_signal, which sets the selector to BLOCK (the program's code
// is traced), calls the program's handler as it asked to be called, and
// puts back what it found. A handler that leaves by longjmp leaves BLOCK,
// which is right for the program's code it jumps to.
//
// The kernel holds our entry and the program's flags, mask and restorer;
// the program's handler is kept here, per signal, and is what the
// program's rt_sigaction queries see. Signals whose handler is the
// agent's own (its chained SIGSYS, SIGTRAP, SIGILL, SIGSEGV, SIGBUS, the
// profiling signal) and glibc's internal SIGCANCEL and SIGSETXID are left
// alone.
#pragma once

#include <cstdint>

namespace ubtrace::agent::syscalls::signals {

// The kernel's struct sigaction on x86-64.
struct KernelAction {
  uint64_t handler, flags, restorer, mask;
};

// At the start of tracing (code of the agent library spans [lo, hi)):
// wraps the handlers the program has.
void wrap_all(uint64_t agent_lo, uint64_t agent_hi);
// When tracing stops: gives the program its handlers back.
void unwrap_all();

// The program's rt_sigaction(sig, act, old, 8), through dispatch: `act`
// is the program's new action already read (null: none), with the mask
// the agent allows; `old` the program's pointer (0: none). Returns the
// call's result.
long program_sigaction(long sig, const KernelAction *act, long old);

} // namespace ubtrace::agent::syscalls::signals
