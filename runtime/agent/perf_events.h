// software:EVENT and hardware:EVENT probes (other than cpu-clock and
// task-clock, which profile.h samples), and watchpoints (a hardware
// breakpoint for the event), inside the traced process: a perf
// event of each thread, opened by the agent, whose overflow every COUNT
// events sends the thread itself a SIGTRAP (perf_event_attr's sigtrap,
// Linux 5.13). The hook runtime's SIGTRAP handler (trap_handler.h) hands
// those to this file, which runs the event's probes on that thread with
// its registers, under the hooks' guard, as profile samples run.
//
// Threads: each thread alive when the probe is attached gets an event with
// `inherit` and `inherit_thread`, so every thread it creates later gets one
// from the kernel, before it runs (a thread created in the moment between
// listing the threads and arming its creator is missed). Events end at
// exec (remove_on_exec, which sigtrap requires); forked children are not
// sampled. The agent's own threads are never sampled.
//
// What is counted: the program's user-space part of an event, except for
// events that happen only in the kernel (context switches, migrations),
// which count the kernel's part. Counting the kernel's part of the others
// would make the signal frame the kernel writes for one sample fault
// (counted) and send the next SIGTRAP before the handler's first
// instruction: with a count of 1, until the stack ran out. Kernel events
// need kernel.perf_event_paranoid 1 or lower, or CAP_PERFMON in the traced
// process; the error names the setting. Hardware events need a PMU: a
// virtual machine often has none, and the error says that.
//
// The descriptors live in the program's descriptor table, at most a
// quarter of its RLIMIT_NOFILE (threads past that are not sampled, and
// counted: perf_unarmed). A program that
// closes them (closefrom at startup, say) ends the sampling of those threads
// and their descendants; the agent's periodic check counts that as a loss
// (perf_closed), never trusting a descriptor it did not find still naming
// its event.
#pragma once

#include "runtime/hook/pt_regs.h"
#include "runtime/result.h"

#include <cstdint>

namespace ubtrace::agent::perf {

inline constexpr uint32_t kMaxEvents = 8;

// An event as perf_event_attr names it; a breakpoint's (PERF_TYPE_BREAKPOINT)
// bp_type in config, its bp_addr in config1 and bp_len in config2.
struct EventConfig {
  uint32_t type = 0;
  uint64_t config = 0, config1 = 0, config2 = 0;
  bool operator==(const EventConfig &) const = default;
};

// Runs fn(regs, user) on a thread every `count` events `what` of
// that thread; `in_kernel`: the kernel's part of the event too. The event
// is opened on every thread sampling every `period` events (a divisor of
// count, the CLI's gcd of the counts of every probe on the event), or the
// one opened for an earlier probe is shared. Returns the threads that have
// it. Agent thread.
Result<uint32_t> add_event(const EventConfig &what, uint64_t period,
                           uint64_t count, bool in_kernel,
                           runtime::hook::Handler fn, void *user);

// Closes every event; SIGTRAPs on their way are dropped.
void stop();

// Whether events are open; the periodic check of their descriptors (agent
// thread, every 100 ms while events are open).
bool active();
void check(int every_ms);

struct Counters {
  uint64_t closed = 0; // events whose descriptor the program took
  uint64_t nested = 0; // samples taken while handling one: dropped
  // Threads given no event: past the descriptor budget (a quarter of the
  // process's RLIMIT_NOFILE), or refused by the kernel.
  uint64_t unarmed = 0;
};
Counters counters();

} // namespace ubtrace::agent::perf
