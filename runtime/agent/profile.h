// profile:hz:N (and :s:, :ms:, :us:) inside the traced process: CPU-time
// sampling without the kernel's perf events, and without privileges.
//
// Every thread gets one POSIX timer per sampling period on its own CPU-time
// clock (the clock of that tid, created from any thread of the process),
// delivering a real-time signal to that thread only (SIGEV_THREAD_ID). So a
// thread is sampled in proportion to the CPU it uses, on whatever CPU it
// runs, as bpftrace's per-CPU timer samples a process; an idle thread is
// never interrupted. The handler (chained in front of any the program sets,
// helpers/signal_chain.h) builds pt_regs from the interrupted context and
// runs the period's probes on the sampled thread, under the hooks' guard: a
// sample that lands while a probe runs on the thread is a nested skip.
// The kernel checks CPU-time timers at its scheduler tick (CONFIG_HZ, 250
// on Debian): a shorter period has fallen due several times by the time
// the signal comes (si_overrun), and the probe runs that many times on the
// one sample (up to 64; beyond, counted as overruns), so counts and
// flame-graph weights come out at the rate asked for.
//
// The signal is the highest real-time signal whose disposition is the
// default when sampling starts; the preload keeps it out of the masks the
// program sets (as it does SIGTRAP) and chains a handler the program sets
// for it behind ours. Our timers' signals carry a cookie in si_value; any
// other signal of that number goes to the program's handler.
//
// Threads: those alive when sampling starts (listed from /proc/self/task),
// those the program creates with pthread_create (the preload's wrapper
// arms the new thread before its start routine runs), and any other (a raw
// clone()) found by the agent's rescan, every 100 ms while sampling; those
// are counted as late (their first moments went unsampled). The rescan
// deletes the timers of threads that exited. A forked child re-arms its one
// thread; exec() ends every timer. Once the program sandboxes itself
// (seccomp, seen by the preload), no timer call is made from its threads:
// the rescan arms new threads from the agent's thread, which a filter of
// the calling thread's does not cover; after a filter on every thread
// (TSYNC) nothing is armed or deleted any more and new threads go
// unsampled. A process sandboxed before the session is refused.
//
// Nothing here takes a lock a sampled thread may hold or calls a libc
// function a probe may be on from a program thread: the thread table is
// guarded by a spin lock and the timers are made with raw system calls.
#pragma once

#include "runtime/hook/pt_regs.h"
#include "runtime/result.h"

#include <cstddef>
#include <cstdint>
#include <signal.h>
#include <vector>

namespace ubtrace::agent::profile {

// Sampling periods at once (distinct ones; probes of one period share it).
inline constexpr size_t kMaxPeriods = 8;

struct Armed {
  uint32_t threads = 0; // threads that got a timer
  uint32_t blocked = 0; // threads left alone: they block the signal
};

// Starts sampling every thread every `period_ns` of its CPU time, running
// fn(regs, user) on the sampled thread. A period already sampled gets no
// second timer (the caller keeps one handler per period). Agent thread.
Result<Armed> add_period(uint64_t period_ns, runtime::hook::Handler fn,
                         void *user);

// Deletes every timer; signals already on their way are dropped.
void stop();

// Arms threads no wrapper saw and drops the timers of threads gone, when
// the last rescan is at least `every_ms` old or a thread started under a
// filter waits to be armed. Agent thread, called every 20 ms while
// sampling.
void rescan(int every_ms);

// Whether sampling is on.
bool active();

// The signal the timers use, 0 when not sampling.
int signal_number();

// A program's sigaction() on the profiling signal once ours is in
// (helpers/signal_chain.h's filter_sigaction).
bool filter_sigaction(int sig, const struct sigaction *act,
                      struct sigaction *old);

// The calling thread was just created by the program (the preload's
// pthread_create wrapper, before the start routine).
void thread_started();

// The calling thread is one of the agent's: never sampled.
void agent_thread_started();

// The process's threads now (/proc/self/task), sorted; whether one is the
// agent's; the signals a thread blocks (its status file's SigBlk; 0 when
// unreadable). Shared with the system call tracer (syscalls.h).
std::vector<int32_t> threads_now();
bool is_agent_tid(int32_t tid);
uint64_t blocked_signals(int32_t tid);

// The program installs a seccomp filter (the preload saw it):
// `all_threads`, on every thread (TSYNC), the agent's included.
void sandboxed(bool all_threads);
// Whether such a filter covers every thread: then the agent's thread makes
// no system call a filter might punish (perf_events.h shares this).
bool all_filtered();

// Loss counters (agent_counters.h), since the process started.
struct Counters {
  uint64_t overruns = 0; // expirations past 64 in one signal: not run
  uint64_t untimed = 0;  // threads no timer could be made for
  uint64_t late = 0;     // threads armed by a rescan
  uint64_t blocked = 0;  // threads blocking the signal when found
};
Counters counters();

} // namespace ubtrace::agent::profile
