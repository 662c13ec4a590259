/* How the agent learns that the program sandboxes itself. A seccomp
 * filter may forbid the system calls a probe makes at hit time
 * (process_vm_readv for str(), get_robust_list in a forked child's first
 * map write, the profile timers' calls), so every way of seeing one ends
 * in the same notice:
 *  - the preload's prctl and syscall interposers (libc's wrappers),
 *  - system call tracing seeing the call itself, made from any site
 *    (runtime/agent/syscalls.cpp: inline `syscall` instructions too),
 *  - a filter already present when the agent attaches (prepare_probe_path
 *    in agent.cpp, from runtime/helpers/safe_copy.h's check).
 * A filter installed by an inline `syscall` instruction while no system
 * call is traced is seen by none of them (docs/DESIGN.md).
 *
 * Shared by the preload (C) and the agent (C++). */
#ifndef UBTRACE_AGENT_SANDBOX_NOTICE_H
#define UBTRACE_AGENT_SANDBOX_NOTICE_H

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* What system call `nr` with first arguments a0, a1 would do to seccomp:
 * 0 nothing, 1 install a mode or filter on the calling thread, 2 on every
 * thread of the process (SECCOMP_FILTER_FLAG_TSYNC). */
static inline int ubt_seccomp_scope(long nr, unsigned long a0,
                                    unsigned long a1) {
  if (nr == SYS_prctl)
    return a0 == PR_SET_SECCOMP ? 1 : 0;
  if (nr != SYS_seccomp)
    return 0;
  if (a0 != SECCOMP_SET_MODE_STRICT && a0 != SECCOMP_SET_MODE_FILTER)
    return 0; /* SECCOMP_GET_ACTION_AVAIL, ..._GET_NOTIF_SIZES: queries */
  return a0 == SECCOMP_SET_MODE_FILTER && (a1 & SECCOMP_FILTER_FLAG_TSYNC) ? 2
                                                                           : 1;
}

#ifdef __cplusplus
namespace ubtrace::agent {
// The one notice (agent.cpp): the helpers, the maps and the profile timers
// make no call a filter may forbid from here on. Only atomic stores: safe
// in a signal handler and on a probed libc path. all_threads: the filter
// covers every thread, the agent's own too.
void notice_sandbox(bool all_threads);
} // namespace ubtrace::agent
#endif

#endif
