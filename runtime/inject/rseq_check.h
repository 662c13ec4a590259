// Whether a stopped thread is inside a restartable sequence's critical
// section (rseq(2): glibc registers every thread). The kernel aborts such
// a section when the thread is preempted, on its way back to user space,
// by moving rip to the section's abort handler. Pointing the thread at the
// bootstrap stub makes the kernel see rip outside the section and forget
// it; putting rip back afterwards would let the section go on as if it had
// never been interrupted. Such a thread is not borrowed (it leaves the
// section within a few instructions; the injector tries again).
#pragma once

#include "runtime/inject/remote_memory.h"

#include <optional>
#include <string>
#include <sys/types.h>
#include <sys/user.h>

namespace ubtrace::runtime::inject {

// The reason not to borrow thread `tid` (stopped, seized), or nullopt.
// Kernels without PTRACE_GET_RSEQ_CONFIGURATION (before 5.13) cannot be
// asked: nullopt.
std::optional<std::string>
in_rseq_critical_section(pid_t tid, const user_regs_struct &regs,
                         const RemoteMemory &memory);

} // namespace ubtrace::runtime::inject
