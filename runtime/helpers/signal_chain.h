// Signals the agent must see first inside the traced process, passing on to
// the program what is not its own: SIGTRAP and SIGILL (the hooks' traps,
// runtime/hook/trap_handler.h), SIGSEGV and SIGBUS (fault-safe reads,
// safe_copy.h).
//
// Our handler goes in first and the one the program had becomes the one it
// chains to. A program that sets a handler later must not take ours out:
// with -c the preload's sigaction()/signal() (runtime/agent/
// preload_signals.c) hand such requests to filter_sigaction(), which makes
// the program's handler the chained one and answers as the kernel would.
// Without the preload (-p), the program's sigaction() reaches the kernel:
// still_first() tells, at the cost of a system call, whether ours is still
// installed.
//
// Passing on follows what the kernel would have done with the program's
// handler: its sa_mask and the signal itself (unless SA_NODEFER) are
// blocked while it runs, SA_RESETHAND resets it; with no handler the
// default action happens where the fault was (the faulting instruction runs
// again with the default disposition), so a core dump shows the program's
// own state.
#pragma once

#include "runtime/result.h"

#include <atomic>
#include <signal.h>

namespace ubtrace::runtime::helpers {

using SignalHandler = void (*)(int, siginfo_t *, void *);

struct ChainedSignal {
  int sig;
  SignalHandler ours;
  // The program's handler (never freed: a handler may be reading an old
  // one; programs set these a few times).
  std::atomic<const struct sigaction *> previous{nullptr};
  std::atomic<bool> installed{false}; // ours went in at least once
  // The rt_sigreturn code ours returns through (null: the usual one).
  // SIGSYS under syscall user dispatch needs one inside the range the
  // dispatch lets through (runtime/agent/syscalls.h).
  void (*restorer)() = nullptr;
  // Run on the thread's alternate signal stack when it has one (SA_ONSTACK:
  // a stack overflow must still reach the program's handler). SIGSYS for
  // every system call runs where the call was made instead.
  bool onstack = true;
};

// Installs ours (again, if something replaced it), chaining whatever is
// there. Off the probe path.
Result<void> install_first(ChainedSignal &s);

// Every handler of ours without a restorer of its own returns through
// `restorer` from now on (null: the usual one): under syscall user
// dispatch, one in the exempt range, so that our handlers' returns are
// not taken for the program's rt_sigreturn calls. Off the probe path.
void set_shared_restorer(void (*restorer)());

// The preload's sigaction() for s.sig. Returns false when the request is for
// the kernel (ours not installed, ours itself, or the default action: then
// ours is replaced, as without us).
bool filter_sigaction(ChainedSignal &s, const struct sigaction *act,
                      struct sigaction *old);

// Makes sure ours is the process's handler now: one rt_sigaction query, and
// if the program replaced ours through the kernel (no preload, -p), ours
// goes back in front of its handler, which becomes the chained one. False
// when a system call fails. Async-signal-safe, no libc call.
bool ensure_first(ChainedSignal &s);

// Hands a signal that is not ours to the program's handler, or performs the
// default action. `fault`: a synchronous fault that re-executing the
// instruction raises again (SIGSEGV, SIGBUS, SIGILL from the kernel).
void pass_on(ChainedSignal &s, siginfo_t *info, void *context, bool fault);

} // namespace ubtrace::runtime::helpers
