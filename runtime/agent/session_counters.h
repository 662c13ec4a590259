// The session's loss counters (agent_counters.h), and their last report
// as the process exits.
//
// The CLI asks for the counters (the Stats request) while the process
// lives, but a process that exits takes the agent with it: its last hits
// would go unreported. So the agent registers an exit handler (atexit,
// once per process) that sends them as a Counters notice just before the
// process goes; the CLI reads it after the exit.
//
// That handler runs on a program thread, inside exit(), where every libc
// function may carry a probe of the trace (a probed sendmsg or
// pthread_mutex_lock would count the agent's own calls as the program's):
// it takes no lock, allocates nothing and calls no libc function. The
// counters are read lock-free (the hook runtime's per-thread counters),
// encoded into a stack buffer with plain stores, and sent as a raw notice
// (raw_notice.h).
//
// Not reported: hits after the handler (later exit handlers, destructors),
// and a process that dies of a signal or leaves through _exit; the CLI then
// keeps the last values it asked for. Forked children send nothing (the
// handler runs only in the process that started the session).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ubtrace::agent {

// Interpreted runs that stopped early, by vm::RunStatus (the probe path
// bumps them; they are never reset).
extern std::atomic<uint64_t> g_run_errors[3];

// A session starts: its counters count from now.
void start_session_counters();

// The session's counters as named values (named_values.h) in `out`;
// returns the bytes written, at most kEncodedCountersMax (one raw notice;
// session_counters.cpp checks at compile time that every counter fits).
inline constexpr size_t kEncodedCountersMax = 1000;
size_t encode_session_counters(uint8_t *out);

// The exit report is sent from now on, on the raw notice channel (and the
// handler is registered, once per process).
void arm_exit_report();
// No exit report from now on (the CLI has the counters).
void disarm_exit_report();

} // namespace ubtrace::agent
