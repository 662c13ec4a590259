// The SIGTRAP and SIGILL handlers.
//
// They serve three kinds of trap (trap_table.h):
//  * the int3 a Jump site carries at its patch address while being patched:
//    the thread goes to the site's trampoline (the probe fires as usual);
//  * a trap byte at an instruction start inside a Jump patch (a thread that
//    was between the displaced instructions when the patch went in): the
//    thread goes to the relocated copy of that instruction;
//  * a Trap site's permanent int3: the handler builds pt_regs from the
//    signal context, runs the dispatcher, writes the registers back and
//    resumes at the out-of-line copy of the displaced instruction.
// A trap at a known address whose byte is no longer a trap byte (the patch
// moved on while the signal was on its way) re-executes the instruction.
// Traps that are not ours go to the handler installed before ours (or get
// the default action: a core dump, as without us).
//
// A thread that blocks SIGTRAP/SIGILL and runs into one of our traps is
// killed by the kernel (it forces the default action for a blocked
// synchronous signal): what install does about it is in trap_safety.h.
#pragma once

#include "runtime/hook/pt_regs.h"
#include "runtime/result.h"

#include <cstdint>
#include <signal.h>

namespace ubtrace::runtime::hook {

// Installs both handlers, or installs them again if something replaced
// them since (chaining to the replacement). Installer, under its lock.
Result<void> install_trap_handlers();

// A sigaction() of the program's on SIGTRAP or SIGILL once ours is in:
// the program's handler becomes the one ours chains to (traps that are not
// ours reach it as before) and `old` gets the one ours chained to, so ours
// stays first. Returns false when the request is for the kernel: another
// signal, ours not installed, ours itself, or the default action (then
// ours is replaced, as without this). Called by the agent's preload, which
// interposes sigaction() and signal().
bool filter_trap_sigaction(int sig, const struct sigaction *act,
                           struct sigaction *old);

// SIGTRAPs a perf event sends (si_code TRAP_PERF; perf_event_attr's sigtrap)
// whose sig_data has kPerfTrapCookie in its high 32 bits go to `handler`
// (the agent's perf events, runtime/agent/perf_events.h) with that
// sig_data and the signal's context; other SIGTRAPs are handled as before.
// nullptr takes it away.
inline constexpr uint32_t kPerfTrapCookie = 0x75627065; // "ubpe"
using PerfTrapHandler = void (*)(uint64_t sig_data, void *context);
void set_perf_trap_handler(PerfTrapHandler handler);

// The general registers of a signal's context (ucontext_t's
// uc_mcontext.gregs) as pt_regs: orig_rax -1, rip and the rest as the
// signal interrupted them (ss the user selector where the kernel left it
// out of the frame).
void regs_from_signal_context(const void *gregs, PtRegs &r);

// Runs fn under the hooks' guard (ubt_hook_dispatch_signal) with the
// registers a signal interrupted, in a frame with the probe context's room
// after them: for samples taken in signal handlers (profile, perf events).
// `ucontext` is the handler's third argument.
void dispatch_in_signal(const void *ucontext, Handler fn, void *user);

// How often each kind of trap was taken (since the process started).
struct TrapCounters {
  uint64_t patching = 0;  // transient int3 of a Jump site being patched
  uint64_t boundary = 0;  // trap byte at an instruction start in a patch
  uint64_t trap_site = 0; // Trap-mode site hits
  uint64_t retried = 0;   // trap byte gone by the time the handler ran
  uint64_t foreign = 0;   // not ours: chained
};
TrapCounters trap_counters();

} // namespace ubtrace::runtime::hook
