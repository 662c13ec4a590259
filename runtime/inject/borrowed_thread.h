// A stopped thread of the target lent to the injector: its registers and
// vector state are saved when it is borrowed and put back, exactly, when
// it is returned. In between it runs system calls and function calls for
// the injector:
//
//  - syscall(): rip is pointed at a `syscall` instruction of libc and the
//    thread single-steps over it; the kernel reports the step as a SIGTRAP
//    right after the call returns. Nothing is written into the target.
//  - call(): a System V call with the return address pointing at an int3
//    the injector placed in memory of its own; the stack is the injector's
//    too (stack_top), so the thread's own stack is never written.
//
// Borrowed register sets always have orig_rax = -1: if the thread was
// stopped inside a system call (rax = -ERESTARTSYS and friends), the
// kernel must not "restart" the borrowed state. The saved registers keep
// the interrupted call's orig_rax/rax, so when they are put back at the
// final SIGTRAP stop, the kernel's signal-return path restarts the call
// (or, for -ERESTART_RESTARTBLOCK, resumes it through restart_syscall with
// the time left) exactly as if the thread had never been borrowed.
#pragma once

#include "runtime/inject/ptrace_thread.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/result.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <sys/user.h>
#include <vector>

namespace ubtrace::runtime::inject {

class BorrowedThread {
public:
  // `thread` must be stopped.
  static Result<BorrowedThread> borrow(PtraceThread thread);

  const user_regs_struct &saved_registers() const { return saved_; }
  PtraceThread &thread() { return thread_; }

  // Runs system call `nr`; returns its raw result (-errno on failure).
  Result<int64_t> syscall(uint64_t syscall_instruction, long nr,
                          std::initializer_list<uint64_t> args,
                          const Deadline &deadline);

  // Calls `function` with up to six integer arguments; returns rax. The
  // int3 at `trap` must be in executable memory of the target, and
  // [stack_top - 64, stack_top) writable.
  Result<uint64_t> call(const RemoteMemory &memory, uint64_t function,
                        std::initializer_list<uint64_t> args,
                        uint64_t stack_top, uint64_t trap,
                        const Deadline &deadline);

  // Puts the registers back and detaches (deferred signals are delivered).
  // The destructor does it too, for a thread still borrowed.
  Result<void> give_back();

  ~BorrowedThread();
  BorrowedThread(BorrowedThread &&other) noexcept;
  BorrowedThread &operator=(BorrowedThread &&) = delete;

private:
  BorrowedThread(PtraceThread thread, user_regs_struct saved,
                 std::vector<uint8_t> vector_state)
      : thread_(std::move(thread)), saved_(saved),
        vector_state_(std::move(vector_state)) {}

  user_regs_struct prepared() const;

  PtraceThread thread_;
  user_regs_struct saved_;
  std::vector<uint8_t> vector_state_;
  bool borrowed_ = true;
};

} // namespace ubtrace::runtime::inject
