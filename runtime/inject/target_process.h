// Facts about a target process from /proc, for the injector: whether it
// can be injected at all (preflight), its threads, whether it is gone,
// what a thread is blocked in, and whether it sees the caller's pids.
#pragma once

#include "runtime/result.h"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::inject {

// Refuses what cannot be injected, with the reason: itself, a missing,
// exited, stopped, already traced, CET shadow-stack or 32-bit process.
// `held`: traced by the caller, which holds it from its exec
// (exec_hold.h).
Result<void> preflight(pid_t pid, bool held = false);

// Thread ids of `pid`, the main thread first.
std::vector<pid_t> list_threads(pid_t pid);
bool thread_exists(pid_t pid, pid_t tid);
// Exited (a zombie, reaped, or exiting with its memory gone).
bool process_gone(pid_t pid);
// "process PID exited during injection".
Error exited_error(pid_t pid);

// The system call thread `tid` is blocked in (/proc/PID/task/TID/syscall),
// nullopt when it runs or cannot be read.
std::optional<long> blocked_call(pid_t pid, pid_t tid);
// Whether that call fails with EINTR when the thread is merely stopped by
// a tracer (epoll_wait & co.): such threads are stopped last.
bool interrupt_fails_call(long syscall_number);
// The state letter of thread `tid` ('R', 'S', 'D', ...), 0 if unknown.
char thread_state(pid_t pid, pid_t tid);

// This process's pid as process `pid` sees it: getpid() when both are in
// the same pid namespace, 0 when it cannot see us.
pid_t own_pid_seen_by(pid_t pid);

} // namespace ubtrace::runtime::inject
