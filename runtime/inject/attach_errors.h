// Messages for a process the injector cannot attach to, with the facts
// that explain why (Yama's ptrace_scope, owners, an existing tracer,
// a non-dumpable process).
#pragma once

#include "runtime/result.h"

#include <optional>
#include <string>
#include <sys/types.h>

namespace ubtrace::runtime::inject {

// "cannot attach to PID: permission denied (...)" for EPERM/EACCES,
// "no such process" for ESRCH, strerror otherwise.
std::string explain_attach_failure(pid_t pid, int err);

// /proc/sys/kernel/yama/ptrace_scope, nullopt without Yama.
std::optional<int> yama_ptrace_scope();

// The pid tracing `pid` (TracerPid), 0 if none.
Result<pid_t> tracer_of(pid_t pid);

// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...).
Result<char> process_state(pid_t pid);

} // namespace ubtrace::runtime::inject
