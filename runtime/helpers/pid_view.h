// The numbers `pid` and `tid` report, and those of pid(init)/tid(init).
//
// bpftrace reports a thread's numbers as the tracer's PID namespace sees
// them (curr_ns, the default) or as the initial namespace does (init). A
// process traced in a PID namespace of its own (a container's) knows only
// its own numbers (its init is 1). The CLI hands the agent its /proc (the
// Procfs message, with whether the CLI runs in the initial namespace);
// there, the link /proc/thread-self names the calling thread by the
// numbers of the CLI's namespace. So one readlinkat per thread (cached,
// read again in a fork child) gives the CLI's view: what `pid`, `tid`, and
// the pid that ustack/usym/func keep for symbols carry. Where it cannot be
// read (the program sandboxed itself and the call may be forbidden, the
// descriptor was closed under us: its device and inode are checked before
// each read) the process's own numbers are used, and the hit counted
// (pid_view_misses).
//
// pid(init) is the CLI's view when the CLI runs in the initial namespace.
// A CLI in a namespace of its own whose /proc is its namespace's cannot
// know the initial numbers: pid(init) and tid(init) are 0 there.
#pragma once

#include <cstdint>

namespace ubtrace::runtime::helpers {

// Whether this process runs in the initial PID namespace.
bool in_initial_pid_namespace();
// Decides what pid(init) is until use_pid_view says more (from
// prepare_process_facts, off the probe path).
void prepare_pid_view();

// The agent: the CLI's /proc (a directory descriptor, kept open by the
// caller until use_pid_view(-1, ...)), and whether the CLI runs in the
// initial PID namespace. Off the probe path.
void use_pid_view(int procfs, bool procfs_is_initial);

// pid << 32 | tid of the calling thread: the CLI's view.
uint64_t view_pid_tgid();
// The same in the initial namespace; 0 when not known.
uint64_t initial_pid_tgid();

// Hits that reported the process's own numbers for want of the CLI's.
uint64_t pid_view_misses();

} // namespace ubtrace::runtime::helpers
