// A stopped thread of the target lent to the injector, with the state it
// was stopped in (registers and XSAVE state), and the one change the
// injector ever makes to it: hand_over(), a single PTRACE_SETREGS that
// points it at the bootstrap stub (bootstrap_frame.h); give_back() then
// detaches.
//
// That write is the commit point of an injection. Before it, the thread's
// registers are its own: if the injector vanishes, the kernel detaches it
// and it goes on as if it had only been stopped (everything else the
// injector wrote is memory the thread does not use: dead stack below its
// red zone, a code cave). After it, the stub runs to its end without
// anybody's help and puts every register, the vector state and the
// signal mask back itself. No single-step, no breakpoint, nothing to trap
// into: nothing is left for a missing tracer to have done.
#pragma once

#include "runtime/inject/ptrace_thread.h"
#include "runtime/result.h"

#include <cstdint>
#include <sys/user.h>
#include <vector>

namespace ubtrace::runtime::inject {

class BorrowedThread {
public:
  // `thread` must be stopped.
  static Result<BorrowedThread> borrow(PtraceThread thread);

  const user_regs_struct &saved_registers() const { return saved_; }
  const std::vector<uint8_t> &vector_state() const { return vector_state_; }
  PtraceThread &thread() { return thread_; }

  // The commit: the thread gets `entry` (it stays stopped until
  // give_back() or the tracer's end). On failure the registers it had are
  // written back.
  Result<void> hand_over(const user_regs_struct &entry);

  // After hand_over(): the thread, still seized, for a caller that holds
  // it on (exec_hold.h); it is no longer given back here.
  PtraceThread keep();

  // Detaches: the thread runs on from its registers, its own or those of
  // hand_over() (the destructor does it too).
  Result<void> give_back();

  ~BorrowedThread();
  BorrowedThread(BorrowedThread &&other) noexcept;
  BorrowedThread &operator=(BorrowedThread &&) = delete;

private:
  BorrowedThread(PtraceThread thread, user_regs_struct saved,
                 std::vector<uint8_t> vector_state)
      : thread_(std::move(thread)), saved_(saved),
        vector_state_(std::move(vector_state)) {}

  PtraceThread thread_;
  user_regs_struct saved_;
  std::vector<uint8_t> vector_state_;
  bool held_ = true;
};

} // namespace ubtrace::runtime::inject
