#include "runtime/inject/borrowed_thread.h"

#include <cassert>

namespace ubtrace::runtime::inject {
namespace {

constexpr uint64_t kTrapFlag = 0x100;
constexpr uint64_t kDirectionFlag = 0x400;

} // namespace

Result<BorrowedThread> BorrowedThread::borrow(PtraceThread thread) {
  auto regs = thread.registers();
  if (!regs)
    return std::move(regs).take_error();
  auto vector = thread.vector_state();
  if (!vector)
    return std::move(vector).take_error();
  return BorrowedThread(std::move(thread), *regs, std::move(*vector));
}

user_regs_struct BorrowedThread::prepared() const {
  user_regs_struct regs = saved_;
  regs.orig_rax = ~0ULL; // not in a system call: nothing to restart
  regs.eflags &= ~(kTrapFlag | kDirectionFlag); // the ABI wants DF clear
  return regs;
}

namespace {

Error exec_error(const PtraceThread &thread) {
  return make_error("process " + std::to_string(thread.tgid()) +
                    " called execve during injection");
}

} // namespace

Result<int64_t> BorrowedThread::syscall(uint64_t syscall_instruction, long nr,
                                        std::initializer_list<uint64_t> args,
                                        const Deadline &deadline) {
  assert(args.size() <= 6);
  if (thread_.exec_happened())
    return exec_error(thread_);
  user_regs_struct regs = prepared();
  unsigned long long *slots[] = {&regs.rdi, &regs.rsi, &regs.rdx,
                                 &regs.r10, &regs.r8,  &regs.r9};
  size_t i = 0;
  for (uint64_t arg : args)
    *slots[i++] = arg;
  regs.rax = static_cast<unsigned long long>(nr);
  regs.rip = syscall_instruction;
  if (auto ok = thread_.set_registers(regs); !ok)
    return std::move(ok).take_error();
  if (auto ok = thread_.run_until_trap(PtraceThread::Resume::SingleStep,
                                       syscall_instruction + 2, deadline);
      !ok)
    return std::move(ok).take_error();
  auto after = thread_.registers();
  if (!after)
    return std::move(after).take_error();
  return static_cast<int64_t>(after->rax);
}

Result<uint64_t> BorrowedThread::call(const RemoteMemory &memory,
                                      uint64_t function,
                                      std::initializer_list<uint64_t> args,
                                      uint64_t stack_top, uint64_t trap,
                                      const Deadline &deadline) {
  assert(args.size() <= 6);
  if (thread_.exec_happened())
    return exec_error(thread_);
  user_regs_struct regs = prepared();
  unsigned long long *slots[] = {&regs.rdi, &regs.rsi, &regs.rdx,
                                 &regs.rcx, &regs.r8,  &regs.r9};
  size_t i = 0;
  for (uint64_t arg : args)
    *slots[i++] = arg;
  // At the first instruction of a function, rsp + 8 is 16-byte aligned and
  // [rsp] is the return address.
  uint64_t sp = (stack_top & ~uint64_t{15}) - 8;
  if (auto ok = memory.write(sp, &trap, sizeof trap); !ok)
    return std::move(ok).take_error();
  regs.rsp = sp;
  regs.rip = function;
  regs.rax = 0; // no vector registers used by a variadic callee
  if (auto ok = thread_.set_registers(regs); !ok)
    return std::move(ok).take_error();
  if (auto ok = thread_.run_until_trap(PtraceThread::Resume::Continue, trap + 1,
                                       deadline);
      !ok)
    return std::move(ok).take_error();
  auto after = thread_.registers();
  if (!after)
    return std::move(after).take_error();
  return after->rax;
}

BorrowedThread::BorrowedThread(BorrowedThread &&other) noexcept
    : thread_(std::move(other.thread_)), saved_(other.saved_),
      vector_state_(std::move(other.vector_state_)),
      borrowed_(other.borrowed_) {
  other.borrowed_ = false;
}

BorrowedThread::~BorrowedThread() {
  if (borrowed_)
    (void)give_back();
}

Result<void> BorrowedThread::give_back() {
  if (!borrowed_)
    return {};
  borrowed_ = false;
  if (thread_.exec_happened()) // nothing of the old image to restore
    return thread_.detach();
  Result<void> restored = thread_.set_registers(saved_);
  if (restored)
    restored = thread_.set_vector_state(vector_state_);
  Result<void> detached = thread_.detach();
  if (!restored)
    return restored;
  return detached;
}

} // namespace ubtrace::runtime::inject
