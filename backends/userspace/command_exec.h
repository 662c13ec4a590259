// The -c command's own execve. The agent lives in the program the command
// becomes, so it comes after that call: no agent sees it. Yet it is a
// system call the traced process makes after the trace began (bpftrace's
// child makes it once the probes are attached), and scripts watch for it
// (`tracepoint:syscalls:sys_enter_execve /str(args.argv[0]) == ...)/`).
// So the CLI runs the system call probes on it before the command goes on
// past its loader: sys_enter_execve and raw_syscalls:sys_enter with the
// arguments the CLI passed (their strings read from the CLI's own copy),
// comm "ubtrace" (the name of the forked child before its exec), at the
// time of the fork; then sys_exit_execve and raw_syscalls:sys_exit with 0,
// as the new program, now. pid and tid are the command's
// (foreign_task.h).
#pragma once

#include "backends/backend.h"
#include "backends/program_set.h"
#include "backends/userspace/target.h"
#include "runtime/bundle.h"

namespace ubtrace::backends {

// Runs the probes of `bundle` on the execve that started `target` (a
// spawned command; nothing otherwise), printing what they write through
// `host`.
void replay_command_exec(const runtime::Bundle &bundle,
                         const ProgramSet &programs, UserspaceTarget &target,
                         BackendHost &host);

} // namespace ubtrace::backends
