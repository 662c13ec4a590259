// The -c command's own execve, and the calls it makes before its agent
// runs. The agent lives in the program the command becomes, and is loaded
// by that program's loader: no agent sees the execve, nor the loader's
// calls (ld.so.cache, each library opened, read, mapped and protected),
// nor those of the initialisers of libraries that come before ubtrace's.
// Yet they are system calls the traced process makes after the trace
// began (bpftrace's child makes them once the probes are attached), and
// scripts watch for them (`tracepoint:syscalls:sys_enter_execve
// /str(args.argv[0]) == ...)/`, opensnoop's libraries). So the CLI runs
// the system call probes on them before the command goes on past its
// agent's start:
//   sys_enter_execve and raw_syscalls:sys_enter with the arguments the
//     CLI passed (their strings read from the CLI's own copy), comm
//     "ubtrace" (the name of the forked child before its exec), at the
//     time of the fork; then sys_exit_execve and raw_syscalls:sys_exit
//     with 0, as the new program;
//   then each call the CLI followed (runtime/inject/loader_calls.h), but
//     those that loaded ubtrace's own libraries, at its entry and its
//     exit, at the times the CLI saw them. Their memory is gone by then:
//     a probe reads the strings the call read (its filename, pathname...)
//     and the first KiB its other pointers point to (at its entry; at its
//     exit as the call left it), kept as they were, and nothing else
//     (loader_read_unkept).
// pid and tid are the command's (foreign_task.h).
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
