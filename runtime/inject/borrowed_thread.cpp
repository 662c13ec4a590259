#include "runtime/inject/borrowed_thread.h"

namespace ubtrace::runtime::inject {

Result<BorrowedThread> BorrowedThread::borrow(PtraceThread thread) {
  auto regs = thread.registers();
  if (!regs)
    return std::move(regs).take_error();
  auto vector = thread.vector_state();
  if (!vector)
    return std::move(vector).take_error();
  return BorrowedThread(std::move(thread), *regs, std::move(*vector));
}

BorrowedThread::BorrowedThread(BorrowedThread &&other) noexcept
    : thread_(std::move(other.thread_)), saved_(other.saved_),
      vector_state_(std::move(other.vector_state_)), held_(other.held_) {
  other.held_ = false;
}

BorrowedThread::~BorrowedThread() {
  if (held_)
    (void)give_back();
}

Result<void> BorrowedThread::hand_over(const user_regs_struct &entry) {
  if (auto ok = thread_.set_registers(entry); !ok) {
    (void)thread_.set_registers(saved_); // in case part of it was written
    return ok;
  }
  return {};
}

PtraceThread BorrowedThread::keep() {
  held_ = false;
  return std::move(thread_);
}

Result<void> BorrowedThread::give_back() {
  if (!held_)
    return {};
  held_ = false;
  return thread_.detach();
}

} // namespace ubtrace::runtime::inject
