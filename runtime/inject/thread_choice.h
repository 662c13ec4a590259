// Choosing the thread to borrow for an injection (injector.h): seize one
// thread at a time (PTRACE_SEIZE + PTRACE_INTERRUPT; the others keep
// running), read its state, and keep it only if
//   - it is at a safe point (safe_point.h),
//   - it is not inside a restartable sequence (rseq_check.h),
//   - its interrupted system call, if any, can be resumed exactly
//     (bootstrap_frame.h; in the Interrupted mode not one that resumes
//     through restart_syscall, since the agent's code run on the thread
//     could rewrite its restart block),
//   - the bootstrap frame can be built for it and fits on its stack
//     (thread_stack.h);
// and, when it was stopped in a call that is to restart, once it has been
// let re-enter that call and stopped at its entry (PTRACE_SYSCALL), with
// nothing else on the way;
// else let it go unchanged and try the next. Threads blocked in a call
// that a mere stop makes fail with EINTR (epoll_wait & co.) are tried
// late, threads in an uninterruptible sleep last (they stop only when it
// ends; the wait for a stop may take the whole safe_point_timeout). Rounds
// repeat with growing, jittered pauses until safe_point_timeout.
#pragma once

#include "runtime/inject/bootstrap_frame.h"
#include "runtime/inject/borrowed_thread.h"
#include "runtime/inject/injector.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/inject/safe_point.h"
#include "runtime/inject/target_glibc.h"

namespace ubtrace::runtime::inject {

struct ChosenThread {
  BorrowedThread thread;
  SafePoint where;
  BootstrapFrame frame;
  int stops = 0; // threads stopped and looked at, this one included
  // Stopped at the entry of its restarted system call: commit with
  // frame.entry_at_syscall (else frame.entry).
  bool at_syscall_entry = false;
};

// `job` is the bootstrap input without the thread's state (regs, xstate,
// call), which is filled in for each candidate.
Result<ChosenThread> choose_thread(pid_t pid, const TargetGlibc &glibc,
                                   const RemoteMemory &memory,
                                   const InjectOptions &options,
                                   LoaderThread mode,
                                   const BootstrapInput &job);

// The thread an ExecHold (exec_hold.h) stopped, at the entry of a system
// call (`at_entry`: the stub issues that call again once done) or
// elsewhere: checked as choose_thread checks each thread, and chosen if it
// passes; else given back (detached) with the reason.
Result<ChosenThread> use_held_thread(PtraceThread thread, bool at_entry,
                                     const TargetGlibc &glibc,
                                     const RemoteMemory &memory,
                                     LoaderThread mode,
                                     const BootstrapInput &job);

} // namespace ubtrace::runtime::inject
