#include "backends/loss_report.h"

#include "runtime/agent/agent_counters.h"

#include <algorithm>
#include <cstring>

namespace ubtrace::backends {
namespace {

struct Meaning {
  const char *name;
  const char *reason; // the JSON key
  const char *what;   // the counted thing, singular (an 's' or, after an
                      // 's', "es" makes it plural)
  const char *why;
};

namespace c = agent::counter;

constexpr Meaning kMeanings[] = {
    {c::kNestedSkips, "nested", "probe hit",
     "skipped: nested in a signal handler or in another probe's run"},
    {c::kShadowOverflows, "return_depth", "return probe hit",
     "skipped: more than {depth} return-probed calls were live on the "
     "thread"},
    {c::kRefusedClaims, "thread_state", "probe hit",
     "skipped: no hook state left for the thread ({states} threads at "
     "once)"},
    {kRegionSlotExhausted, "thread_slot", "probe hit",
     "lost map updates or events: no thread slot left ({slots} threads at "
     "once)"},
    {kRegionSlotRawChildren, "raw_fork_child", "thread slot claim",
     "refused: in a child of a raw fork or clone system call, which has no "
     "robust mutex list to hold a slot with (its map updates and events were "
     "lost)"},
    {c::kVectorSkips, "installing", "probe hit",
     "skipped: the probe was being installed"},
    {c::kUnwoundEntries, "unwound", "return probe hit",
     "missed: the frame was unwound (a C++ exception or a thread "
     "cancellation)"},
    {c::kAbandonedRuns, "abandoned", "probe run",
     "cut short: a signal handler jumped out (longjmp)"},
    {c::kNoticeTimeouts, "library_wait", "dlopen/dlclose call",
     "outlasted the 2 s wait for ubtrace: calls into the library meanwhile "
     "may have been missed"},
    {c::kInsnBudget, "insn_budget", "probe run",
     "stopped early: past the interpreter's instruction budget"},
    {c::kMissingHelper, "missing_helper", "probe run",
     "stopped early: it called a helper the agent lacks"},
    {c::kProfileOverruns, "profile_overrun", "profile sample",
     "missed: more than 64 fell due before the thread took the signal (a "
     "thread that blocked it, or a rate far above the kernel's tick)"},
    {c::kProfileUntimed, "profile_untimed", "thread",
     "never sampled: no profiling timer was made for them (a seccomp "
     "sandbox, or they ended before the agent could arm them)"},
    {c::kProfileLate, "profile_late", "thread",
     "sampled late: found by the 100 ms rescan, not as they started (a raw "
     "clone(), or a thread started under a seccomp filter)"},
    {c::kProfileBlocked, "profile_blocked", "thread",
     "never sampled: they blocked the profiling signal when found (a mask "
     "set before the trace, or by a raw system call)"},
    {c::kSyscallUntraced, "syscall_untraced", "thread",
     "never traced for system calls: they blocked SIGSYS when tracing "
     "started, or could not turn syscall user dispatch on"},
    {c::kSyscallClonesRefused, "syscall_clone_refused", "clone call",
     "failed with EAGAIN: no clone stub was left for their call site"},
    {c::kSyscallChildExits, "syscall_child_exits_unseen", "thread",
     "left out of clone's exit probes: made with CLONE_VM but no TLS of "
     "their own, they run on their parent's, which the probes need"},
    {c::kSyscallSandboxed, "syscall_sandboxed", "process",
     "untraced for system calls from its seccomp filter on (the filter may "
     "forbid the calls tracing makes)"},
    {c::kPerfClosed, "perf_closed", "perf event",
     "ended early: the program closed its descriptor, and the threads it "
     "sampled (with the threads they started) went unsampled from then on"},
    {c::kPerfNested, "perf_nested", "perf event sample",
     "dropped: the event fell due again while the thread handled the last "
     "sample (the handler's own page faults, say)"},
    {c::kPerfUnarmed, "perf_unarmed", "thread",
     "never counted for software/hardware events: no perf event was opened "
     "for them (each takes a descriptor of the process, and ubtrace takes "
     "at most a quarter of its limit; or the kernel refused)"},
    {c::kPidViewMisses, "pid_view", "probe hit",
     "reported pid and tid as the process's own PID namespace numbers them, "
     "not as ubtrace's does: its threads' numbers could not be read there "
     "(a sandboxed program)"},
    {kFollowFailed, "follow_failed", "program",
     "of the command's tree connected but could not be traced (-v says "
     "why), and ran untraced"},
    {kFollowExecLost, "follow_exec_lost", "program",
     "exec'd by a traced process of the command's tree did not connect (a "
     "static or setuid program, one run with LD_PRELOAD cleared, or one "
     "sandboxed by the tree), and ran untraced"},
    {kFollowAgentClosed, "follow_agent_closed", "program",
     "of the command's tree closed the agent's descriptors, and ran on "
     "untraced"},
    {kSystemWideSkipped, "system_wide_skipped", "process",
     "untraced though mapping a probed file: the agent could not be loaded "
     "(static, setuid, sandboxed, busy with another tracer; -v says why)"},
    {kSystemWideUnreadable, "system_wide_unreadable", "process",
     "not looked at: mappings not the user's to read (other users' "
     "processes, or more privileged ones; -v lists them)"},
    {kSampleLost, "system_samples_lost", "sample",
     "of system-wide profile, perf event or system call probes lost: the "
     "kernel found the CPU's ring full (probes slower than the rate)"},
    {kSampleFailed, "system_sample_failed", "sample",
     "of system-wide profile, perf event or system call probes whose probe "
     "stopped with an error (the first is printed)"},
    {kSampleUnrun, "system_samples_unrun", "sample",
     "of system-wide probes not run: the trace ended (exit(), or its end) "
     "before the CLI ran them"},
    {kSampleReadGone, "system_sample_read_gone", "memory read",
     "of system-wide probes found the process ended (or exec'd, or its "
     "number taken by another): the CLI reads a process's memory when it "
     "handles the kernel's record, milliseconds later (the read gave "
     "nothing)"},
    {kLoaderReadUnkept, "loader_read_unkept", "memory read",
     "of probes on the command's system calls before the agent ran (its "
     "loader's) asked for memory not kept: the CLI keeps each call's strings "
     "and the first KiB its other pointers point to (the read gave "
     "nothing)"},
    {kRingDeadWriters, "dead_writer", "event",
     "lost: the writer died before submitting"},
    {kRingStalledWriters, "stalled_writer", "event",
     "lost: the writer stalled for more than 5 s"},
};

// `why` with the limits it names filled in.
std::string with_limits(std::string why, const LossContext &context) {
  const std::pair<const char *, uint32_t> limits[] = {
      {"{slots}", context.thread_slots},
      {"{states}", context.hook_states},
      {"{depth}", context.shadow_depth}};
  for (const auto &[field, value] : limits)
    for (size_t at; (at = why.find(field)) != std::string::npos;)
      why.replace(at, std::strlen(field), std::to_string(value));
  return why;
}

} // namespace

std::vector<output::LostHits>
describe_losses(const agent::NamedValues &counters,
                const LossContext &context) {
  // Counters of one name (one per traced process) are one loss.
  agent::NamedValues summed;
  for (const auto &[name, count] : counters) {
    auto it = std::find_if(summed.begin(), summed.end(),
                           [&](const auto &e) { return e.first == name; });
    if (it == summed.end())
      summed.emplace_back(name, count);
    else
      it->second += count;
  }
  std::vector<output::LostHits> out;
  for (const auto &[name, count] : summed) {
    if (!count)
      continue;
    std::string n = std::to_string(count);
    output::LostHits l{count, name, ""};
    const Meaning *m = nullptr;
    for (const auto &candidate : kMeanings)
      if (name == candidate.name)
        m = &candidate;
    if (m) {
      l.reason = m->reason;
      std::string what = m->what;
      if (count != 1)
        what += what.back() == 's' ? "es" : "s";
      l.message = n + " " + what + " " + with_limits(m->why, context);
    } else {
      l.message = n + " probe hits lost (" + name + ")";
    }
    out.push_back(std::move(l));
  }
  return out;
}

} // namespace ubtrace::backends
