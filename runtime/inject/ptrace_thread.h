// One thread of another process under PTRACE_SEIZE: stop it, read its
// registers (general and the XSAVE state), write them once, and detach.
// Other threads of the process are not touched and keep running.
//
// Nothing here needs the tracer to survive: no PTRACE_O_EXITKILL, no
// signal kept back. A signal that arrives for the thread before it stops
// is handed on at once (the signal-delivery-stop is resumed with it), so
// the program's handler runs as it would have, on the thread's own state;
// the interrupt then stops the thread where that leaves it. If the tracer
// vanishes at any point, the kernel detaches the thread, which goes on
// with whatever registers it has then (its own, or the ones of the one
// write, see borrowed_thread.h). A job-control stop of the process does
// not pause the injector; detaching puts the thread back into the group
// stop (the kernel does that).
#pragma once

#include "runtime/inject/deadline.h"
#include "runtime/result.h"

#include <csignal>
#include <cstdint>
#include <sys/types.h>
#include <sys/user.h>
#include <vector>

namespace ubtrace::runtime::inject {

class PtraceThread {
public:
  // PTRACE_SEIZE of thread `tid` of process `tgid`. EPERM is explained
  // (attach_errors.h).
  static Result<PtraceThread> seize(pid_t tgid, pid_t tid);

  pid_t tid() const { return tid_; }
  pid_t tgid() const { return tgid_; }

  // PTRACE_INTERRUPT, then waits until the thread is stopped. A thread
  // blocked in a system call stops with the call interrupted (rax holds
  // -ERESTART*; see bootstrap_frame.h for how it resumes).
  Result<void> interrupt(const Deadline &deadline);

  // Lets the stopped thread run to the entry of its next system call and
  // stop there. true: it stopped at the entry of system call `nr` with
  // rip == `rip` (the restart of the call it was interrupted in: a thread
  // stopped in a restartable call re-enters it at once); false: it
  // stopped somewhere else (a signal it had to take first was handed on,
  // ...). Either way it is stopped on return.
  Result<bool> run_to_syscall_entry(uint64_t nr, uint64_t rip,
                                    const Deadline &deadline);

  // Lets the stopped thread run from system call to system call
  // (PTRACE_SYSCALL) to the entry of the next one, handing on any signal
  // met on the way, and stops it there.
  //   Entry: stopped at a system call's entry (registers() tells which);
  //   Exec:  it called execve: stopped in its new image, at the exec;
  //   Other: stopped otherwise (a job-control stop, or no entry before
  //          `deadline`: then interrupted where it runs).
  enum class Step : uint8_t { Entry, Exec, Other };
  Result<Step> next_syscall_entry(const Deadline &deadline);

  Result<user_regs_struct> registers() const;
  Result<void> set_registers(const user_regs_struct &regs);
  // The whole XSAVE area (NT_X86_XSTATE): x87, SSE, AVX, AVX-512, ...
  Result<std::vector<uint8_t>> vector_state() const;

  // Detaches; the thread runs on from its registers as they are.
  Result<void> detach();

  // The process called execve while held: its old image is gone.
  bool exec_happened() const { return exec_happened_; }
  // Signals that arrived while it was being stopped, handed on (for
  // reports and tests).
  int signals_passed() const { return signals_passed_; }

  ~PtraceThread();
  PtraceThread(PtraceThread &&other) noexcept;
  PtraceThread &operator=(PtraceThread &&) = delete;
  PtraceThread(const PtraceThread &) = delete;

private:
  PtraceThread(pid_t tgid, pid_t tid) : tgid_(tgid), tid_(tid) {}

  enum class StopKind {
    SignalDelivery, // a signal is about to be delivered
    Syscall,        // a syscall-entry or -exit stop (PTRACE_SYSCALL)
    Interrupt,      // PTRACE_INTERRUPT's PTRACE_EVENT_STOP
    GroupStop,      // job-control stop of the process
    Exec,           // PTRACE_EVENT_EXEC
    OtherEvent,
    Exited,
  };
  struct Stop {
    StopKind kind = StopKind::OtherEvent;
    int signal = 0;
    int wait_status = 0;
  };
  Result<Stop> wait_stop(const Deadline &deadline);
  Error exited_error(int wait_status) const;

  pid_t tgid_ = 0, tid_ = 0;
  bool attached_ = false;
  bool stopped_ = false;
  bool exec_happened_ = false;
  int signals_passed_ = 0;
};

} // namespace ubtrace::runtime::inject
