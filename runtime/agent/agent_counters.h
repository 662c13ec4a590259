// The agent's loss counters, by the names they travel under (the Stats
// reply and the Counters notice, named_values.h). Each counts probe hits
// of this session that did not run, or ran only in part; the CLI prints
// the ones that are not zero at exit (backends/loss_report.h says how).
// Counters the hook runtime keeps since the process started are reported
// relative to the session's start, so a second `ubtrace -p` on a process
// does not inherit the first one's.
#pragma once

namespace ubtrace::agent::counter {

// A hit on a thread already running a probe: a signal handler interrupted
// the probe, or the probe's own code called a probed function.
inline constexpr const char *kNestedSkips = "nested_skips";
// A return not traced: the thread had 64 return-probed calls live.
inline constexpr const char *kShadowOverflows = "shadow_overflows";
// A hit on a thread that found no free hook state (the pool is full).
inline constexpr const char *kRefusedClaims = "refused_claims";
// A hit skipped while its probe was being installed.
inline constexpr const char *kVectorSkips = "vector_skips";
// Returns that never fire: their frames were unwound (C++ exception,
// thread cancellation).
inline constexpr const char *kUnwoundEntries = "unwound_entries";
// Probe runs a signal handler jumped out of (longjmp), found by the next
// hit on the thread or by an uninstall that stopped waiting for them.
inline constexpr const char *kAbandonedRuns = "abandoned_runs";
// dlopen/dlclose calls whose wait for the CLI ended unanswered (2 s): the
// library's calls meanwhile may have run unprobed.
inline constexpr const char *kNoticeTimeouts = "library_wait_timeouts";
// Interpreted runs stopped early: past the instruction budget, or calling a
// helper the agent lacks.
inline constexpr const char *kInsnBudget = "interpreter_insn_budget";
inline constexpr const char *kMissingHelper = "interpreter_missing_helper";

// profile probes (profile.h): timer expirations one signal brought beyond
// the 64 it runs the probe for; threads
// no timer could be made for (never sampled); threads found by the rescan,
// not at their creation (unsampled until then).
inline constexpr const char *kProfileOverruns = "profile_overruns";
inline constexpr const char *kProfileUntimed = "profile_untimed_threads";
inline constexpr const char *kProfileLate = "profile_late_threads";
// Threads that blocked the profiling signal when found: never armed (a
// pending signal could reach the program's sigwait or signalfd).
inline constexpr const char *kProfileBlocked = "profile_blocked_threads";

// System call probes (syscalls.h): threads whose calls were never traced
// (they blocked SIGSYS when tracing started, or dispatch could not be
// turned on); clone calls failed with EAGAIN for want of a stub; children
// of a clone with CLONE_VM but no TLS of their own, whose exit probes did
// not run (they share their running parent's TLS); processes that
// installed a seccomp filter, untraced from that call on.
inline constexpr const char *kSyscallUntraced = "syscall_untraced_threads";
inline constexpr const char *kSyscallClonesRefused = "syscall_clones_refused";
inline constexpr const char *kSyscallChildExits = "syscall_child_exits_unseen";
inline constexpr const char *kSyscallSandboxed = "syscall_sandboxed";

// software:/hardware: probes (perf_events.h): events whose descriptor the
// program closed or replaced (their threads unsampled from then on).
inline constexpr const char *kPerfClosed = "perf_closed";
// Samples an event sent while the thread handled the last one (the
// handler's own page faults): dropped.
inline constexpr const char *kPerfNested = "perf_nested";
// Threads alive at the attach given no event (perf_events.h's budget of
// descriptors, or the kernel refused): never sampled.
inline constexpr const char *kPerfUnarmed = "perf_unarmed";

// A process in a PID namespace of its own: hits whose pid/tid are its
// namespace's numbers, the CLI's could not be read (runtime/helpers/
// pid_view.h: a sandboxed program, its /proc descriptor closed).
inline constexpr const char *kPidViewMisses = "pid_view_misses";

} // namespace ubtrace::agent::counter
