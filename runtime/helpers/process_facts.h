// What helpers ask about the running thread and process at a probe hit,
// without libc and, where the answer is in memory, without a system call:
// the clock and the cpu from the vDSO (or glibc's rseq area), the thread id
// from glibc's thread descriptor (thread_identity.h), the process id cached
// per thread and
// re-read when that thread id changes (a fork child). The rest are raw
// system calls of the set every glibc program makes (getuid, getgid), or
// calls a seccomp filter may forbid (prctl for the thread name, kill):
// those are skipped once the program is sandboxed (safe_copy.h) and
// counted.
//
// prepare_process_facts() reads the vDSO, the descriptor offsets and the
// cgroup once, off the probe path; until then, or where something is
// missing, each fact falls back to its system call.
#pragma once

#include "runtime/helpers/thread_id_reset.h"

#include <cstdint>
#include <ctime>
#include <string>

namespace ubtrace::runtime::helpers {

void prepare_process_facts();

uint64_t clock_ns(clockid_t clock);
uint32_t current_cpu();
uint32_t current_numa_node();
uint32_t current_tid();
uint32_t current_pid();
uint64_t current_cgroup_id();
// The cgroup id of process `pid` ("self" or a number): its cgroup2
// directory's inode, read from /proc (libc: off the probe path). 0 when
// it cannot be read.
uint64_t cgroup_id_of(const std::string &pid);

// The thread's name (16 bytes with its NUL); false when it cannot be read
// (sandboxed: the name cached on the thread, or the process's, is used).
void current_comm(char out[16]);

// The name of the thread group's leader or of the parent process (16
// bytes with its NUL), read from /proc at the hit: "" for the parent when
// it cannot be read or the process is sandboxed; the leader falls back to
// the name the process had when the agent started.
enum class RelatedTask { Parent, Leader };
void related_comm(RelatedTask which, char out[16]);

// Sends sig to this process; -errno, or -EPERM when skipped in a sandbox.
long signal_self(int sig);

// Hit-time system calls skipped because the process is sandboxed.
uint64_t sandbox_skips();
void count_sandbox_skip();

} // namespace ubtrace::runtime::helpers
