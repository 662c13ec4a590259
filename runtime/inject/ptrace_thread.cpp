#include "runtime/inject/ptrace_thread.h"

#include "runtime/inject/attach_errors.h"
#include "runtime/inject/exit_status.h"
#include "runtime/inject/sys_error.h"

#include <cerrno>
#include <elf.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

constexpr size_t kMaxXsave = 64 * 1024;

bool is_stop_signal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

long ptrace_call(int request, pid_t tid, void *addr, void *data) {
  return ::ptrace(static_cast<__ptrace_request>(request), tid, addr, data);
}

void pause_briefly(int round) {
  if (round < 20) {
    ::sched_yield();
    return;
  }
  long ns = std::min(1000000L, 10000L << std::min(round - 20, 7));
  timespec ts{0, ns};
  ::nanosleep(&ts, nullptr);
}

} // namespace

Result<PtraceThread> PtraceThread::seize(pid_t tgid, pid_t tid) {
  PtraceThread thread(tgid, tid);
  long options = PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD;
  if (ptrace_call(PTRACE_SEIZE, tid, nullptr,
                  reinterpret_cast<void *>(options)) != 0)
    return make_error(explain_attach_failure(tid, errno));
  thread.attached_ = true;
  return thread;
}

PtraceThread::PtraceThread(PtraceThread &&other) noexcept
    : tgid_(other.tgid_), tid_(other.tid_), attached_(other.attached_),
      stopped_(other.stopped_), exec_happened_(other.exec_happened_),
      signals_passed_(other.signals_passed_) {
  other.attached_ = false;
}

PtraceThread::~PtraceThread() {
  if (!attached_)
    return;
  if (!stopped_)
    (void)interrupt(Deadline(std::chrono::milliseconds(1000)));
  (void)detach();
}

Error PtraceThread::exited_error(int wait_status) const {
  return make_error("process " + std::to_string(tgid_) +
                    " exited during injection (thread " + std::to_string(tid_) +
                    " " + ExitStatus::from_wait_status(wait_status).describe() +
                    ")");
}

Result<PtraceThread::Stop> PtraceThread::wait_stop(const Deadline &deadline) {
  for (int round = 0;; ++round) {
    int status = 0;
    pid_t got = ::waitpid(tid_, &status, __WALL | WNOHANG);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      // Reaped elsewhere, or gone: either way it no longer runs.
      attached_ = false;
      return make_error("process " + std::to_string(tgid_) +
                        " exited during injection (thread " +
                        std::to_string(tid_) + " is gone)");
    }
    if (got == 0) {
      if (deadline.expired())
        return make_error("timed out waiting for thread " +
                          std::to_string(tid_) + " of process " +
                          std::to_string(tgid_) + " to stop");
      pause_briefly(round);
      continue;
    }

    Stop stop;
    stop.wait_status = status;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      attached_ = false;
      stopped_ = false;
      stop.kind = StopKind::Exited;
      return stop;
    }
    if (!WIFSTOPPED(status))
      continue;
    stopped_ = true;
    stop.signal = WSTOPSIG(status);
    int event = status >> 16;
    if (event == PTRACE_EVENT_STOP)
      stop.kind = is_stop_signal(stop.signal) ? StopKind::GroupStop
                                              : StopKind::Interrupt;
    else if (event == PTRACE_EVENT_EXEC) {
      stop.kind = StopKind::Exec;
      exec_happened_ = true;
    } else if (event != 0)
      stop.kind = StopKind::OtherEvent;
    else if (stop.signal == (SIGTRAP | 0x80))
      stop.kind = StopKind::Syscall;
    else
      stop.kind = StopKind::SignalDelivery;
    return stop;
  }
}

Result<void> PtraceThread::interrupt(const Deadline &deadline) {
  if (stopped_)
    return {};
  if (ptrace_call(PTRACE_INTERRUPT, tid_, nullptr, nullptr) != 0)
    return sys_error("PTRACE_INTERRUPT thread " + std::to_string(tid_), errno);
  for (;;) {
    auto stop = wait_stop(deadline);
    if (!stop)
      return std::move(stop).take_error();
    long sig = 0;
    switch (stop->kind) {
    case StopKind::Interrupt:
    case StopKind::GroupStop:
      return {};
    case StopKind::SignalDelivery:
      // Handed on now, on the thread's own state; the pending interrupt
      // stops it again before it returns to user code.
      sig = stop->signal;
      ++signals_passed_;
      break;
    case StopKind::Syscall: // resumed with PTRACE_CONT: no more of these
      break;
    case StopKind::OtherEvent:
      break;
    case StopKind::Exec:
      return make_error("process " + std::to_string(tgid_) +
                        " called execve during injection");
    case StopKind::Exited:
      return exited_error(stop->wait_status);
    }
    stopped_ = false;
    if (ptrace_call(PTRACE_CONT, tid_, nullptr,
                    reinterpret_cast<void *>(sig)) != 0)
      return sys_error("PTRACE_CONT", errno);
  }
}

Result<bool> PtraceThread::run_to_syscall_entry(uint64_t nr, uint64_t rip,
                                                const Deadline &deadline) {
  stopped_ = false;
  if (ptrace_call(PTRACE_SYSCALL, tid_, nullptr, nullptr) != 0)
    return sys_error("PTRACE_SYSCALL thread " + std::to_string(tid_), errno);
  auto stop = wait_stop(deadline);
  if (!stop) {
    if (attached_ && !stopped_)
      if (auto again = interrupt(Deadline(std::chrono::milliseconds(2000)));
          !again)
        return std::move(again).take_error();
    return false;
  }
  switch (stop->kind) {
  case StopKind::Exited:
    return exited_error(stop->wait_status);
  case StopKind::Exec:
    return make_error("process " + std::to_string(tgid_) +
                      " called execve during injection");
  case StopKind::Interrupt:
  case StopKind::GroupStop:
  case StopKind::OtherEvent:
    return false;
  case StopKind::SignalDelivery:
    // Handed on: the thread takes it where it is, as it would have.
    stopped_ = false;
    ++signals_passed_;
    if (ptrace_call(
            PTRACE_CONT, tid_, nullptr,
            reinterpret_cast<void *>(static_cast<long>(stop->signal))) != 0)
      return sys_error("PTRACE_CONT", errno);
    if (auto again = interrupt(deadline); !again)
      return std::move(again).take_error();
    return false;
  case StopKind::Syscall:
    break;
  }
  __ptrace_syscall_info info{};
  long size = ptrace_call(PTRACE_GET_SYSCALL_INFO, tid_,
                          reinterpret_cast<void *>(sizeof info), &info);
  if (size > 0 && info.op != PTRACE_SYSCALL_INFO_ENTRY)
    return false;
  auto regs = registers();
  if (!regs)
    return std::move(regs).take_error();
  return regs->orig_rax == nr && regs->rip == rip;
}

Result<PtraceThread::Step>
PtraceThread::next_syscall_entry(const Deadline &deadline) {
  long sig = 0;
  for (;;) {
    stopped_ = false;
    if (ptrace_call(PTRACE_SYSCALL, tid_, nullptr,
                    reinterpret_cast<void *>(sig)) != 0)
      return sys_error("PTRACE_SYSCALL thread " + std::to_string(tid_), errno);
    sig = 0;
    auto stop = wait_stop(deadline);
    if (!stop) {
      if (!attached_)
        return std::move(stop).take_error();
      if (auto again = interrupt(Deadline(std::chrono::milliseconds(2000)));
          !again)
        return std::move(again).take_error();
      return Step::Other;
    }
    switch (stop->kind) {
    case StopKind::Exited:
      return exited_error(stop->wait_status);
    case StopKind::Exec:
      return Step::Exec;
    case StopKind::GroupStop:
      return Step::Other;
    case StopKind::Interrupt: // an earlier interrupt's, met at an exec stop
    case StopKind::OtherEvent:
      continue;
    case StopKind::SignalDelivery:
      sig = stop->signal; // handed on as the thread runs on
      ++signals_passed_;
      continue;
    case StopKind::Syscall:
      break;
    }
    __ptrace_syscall_info info{};
    long size = ptrace_call(PTRACE_GET_SYSCALL_INFO, tid_,
                            reinterpret_cast<void *>(sizeof info), &info);
    if (size <= 0)
      return sys_error("PTRACE_GET_SYSCALL_INFO thread " + std::to_string(tid_),
                       errno);
    if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
      return Step::Entry;
  }
}

Result<user_regs_struct> PtraceThread::registers() const {
  user_regs_struct regs{};
  if (ptrace_call(PTRACE_GETREGS, tid_, nullptr, &regs) != 0)
    return sys_error("PTRACE_GETREGS thread " + std::to_string(tid_), errno);
  return regs;
}

Result<void> PtraceThread::set_registers(const user_regs_struct &regs) {
  if (ptrace_call(PTRACE_SETREGS, tid_, nullptr,
                  const_cast<user_regs_struct *>(&regs)) != 0)
    return sys_error("PTRACE_SETREGS thread " + std::to_string(tid_), errno);
  return {};
}

Result<std::vector<uint8_t>> PtraceThread::vector_state() const {
  std::vector<uint8_t> state(kMaxXsave);
  iovec iov{state.data(), state.size()};
  if (ptrace_call(PTRACE_GETREGSET, tid_,
                  reinterpret_cast<void *>(NT_X86_XSTATE), &iov) != 0)
    return sys_error("PTRACE_GETREGSET(NT_X86_XSTATE) thread " +
                         std::to_string(tid_),
                     errno);
  state.resize(iov.iov_len);
  return state;
}

Result<void> PtraceThread::detach() {
  if (!attached_)
    return {};
  attached_ = false;
  stopped_ = false;
  if (ptrace_call(PTRACE_DETACH, tid_, nullptr, nullptr) != 0) {
    if (errno == ESRCH)
      return make_error("process " + std::to_string(tgid_) +
                        " exited during injection");
    return sys_error("PTRACE_DETACH thread " + std::to_string(tid_), errno);
  }
  return {};
}

} // namespace ubtrace::runtime::inject
