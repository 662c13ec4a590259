// One thread of another process under PTRACE_SEIZE: stop it, read and
// write its registers (general and x87/SSE/AVX state), run it until it
// reaches a trap the injector set, and detach. Other threads of the
// process are not touched and keep running.
//
// Signals that arrive for the thread while it is held are not delivered
// on the injector's borrowed register state: they are taken (the
// signal-delivery-stop is resumed without the signal) and handed back at
// detach, so the program sees them exactly where it was interrupted. The
// first one is re-delivered with its original siginfo (PTRACE_SETSIGINFO
// at the final SIGTRAP stop, then PTRACE_DETACH with the signal); further
// ones are re-sent with tgkill and lose their siginfo payload. A job-
// control stop of the process does not pause the injection; detaching puts
// the thread back into the group stop (the kernel does that).
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
  // -ERESTART*; restoring the registers later restarts it).
  Result<void> interrupt(const Deadline &deadline);

  Result<user_regs_struct> registers() const;
  Result<void> set_registers(const user_regs_struct &regs);
  // The whole XSAVE area (NT_X86_XSTATE): x87, SSE, AVX, AVX-512, ...
  Result<std::vector<uint8_t>> vector_state() const;
  Result<void> set_vector_state(const std::vector<uint8_t> &state);

  enum class Resume { Continue, SingleStep };
  // Lets the stopped thread run until it stops on a SIGTRAP raised by the
  // kernel (an int3 or a single step) with rip == `expected_rip`; on any
  // other trap or signal it is resumed again (signals are kept for
  // detach). Fails if the process exits or execs, or at the deadline (the
  // thread is then stopped again before returning).
  Result<void> run_until_trap(Resume how, uint64_t expected_rip,
                              const Deadline &deadline);

  // Detaches, handing back the signals taken while held. The thread must
  // be stopped (it is after interrupt() and run_until_trap()).
  Result<void> detach();

  // Signals taken while held so far (for tests and reports).
  size_t deferred_signal_count() const { return deferred_.size(); }
  // The process called execve while held: its old image (addresses,
  // saved registers) is gone.
  bool exec_happened() const { return exec_happened_; }

  ~PtraceThread();
  PtraceThread(PtraceThread &&other) noexcept;
  PtraceThread &operator=(PtraceThread &&) = delete;
  PtraceThread(const PtraceThread &) = delete;

private:
  PtraceThread(pid_t tgid, pid_t tid) : tgid_(tgid), tid_(tid) {}

  enum class StopKind {
    SignalDelivery, // a signal is about to be delivered (siginfo valid)
    Interrupt,      // PTRACE_INTERRUPT's PTRACE_EVENT_STOP
    GroupStop,      // job-control stop of the process
    Exec,           // PTRACE_EVENT_EXEC
    OtherEvent,
    Exited,
  };
  struct Stop {
    StopKind kind = StopKind::OtherEvent;
    int signal = 0;
    siginfo_t info{};
    int wait_status = 0;
  };
  Result<Stop> wait_stop(const Deadline &deadline);
  Error exited_error(int wait_status) const;

  pid_t tgid_ = 0, tid_ = 0;
  bool attached_ = false;
  bool stopped_ = false;
  bool exec_happened_ = false;
  StopKind last_stop_ = StopKind::OtherEvent;
  std::vector<siginfo_t> deferred_;
};

} // namespace ubtrace::runtime::inject
