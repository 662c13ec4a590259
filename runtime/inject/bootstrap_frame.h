// The bootstrap frame: what the injector writes on a stopped thread's own
// stack, below its red zone, and the registers of the one write that hands
// the thread to the bootstrap stub (bootstrap.S, layout in
// bootstrap_layout.h). Pure functions of the thread's saved state: no
// process is touched here.
//
// The frame holds the stub's job (the region to map, the block image to
// copy there, the XSAVE image to restore, the signal mask slot), and the
// restore record the stub ends with. The record is the thread's saved
// registers, except when it was stopped inside a system call the kernel
// would restart (rax = -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND or
// -ERESTART_RESTARTBLOCK with orig_rax >= 0): the commit sets orig_rax to
// -1, so the kernel restarts nothing, and the record does what its
// restart would have done, rip back over the 2-byte syscall instruction,
// rax = the call's number, or restart_syscall's for RESTARTBLOCK (the
// kernel keeps the call's restart block, which nothing the stub does
// rewrites, so the call resumes with what it had left, e.g. the rest of a
// relative sleep). The job also carries the call's restart code and its
// rip, so that the stub can turn the restart into -EINTR when a signal
// that the thread handles arrived while it ran (the kernel's rule).
#pragma once

#include "runtime/result.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/user.h>
#include <vector>

namespace ubtrace::runtime::inject {

// How a stopped thread's system call, if any, is to be resumed.
struct InterruptedCall {
  enum class Kind : uint8_t {
    None,         // not in a call, or one that has finished (rax = result)
    Restart,      // -ERESTART{SYS,NOINTR,NOHAND}: issue it again
    RestartBlock, // -ERESTART_RESTARTBLOCK: resume through restart_syscall
  };
  Kind kind = Kind::None;
  int64_t code = 0;        // the -ERESTART* value
  uint64_t resume_rip = 0; // where the thread resumes
  uint64_t resume_rax = 0;
};

// `instruction` is the two bytes before rip (0f 05 for syscall, cd 80 for
// int 0x80), needed only when the thread is to restart a call.
Result<InterruptedCall>
interrupted_call(const user_regs_struct &regs,
                 std::optional<std::array<uint8_t, 2>> instruction);
// The registers of a thread stopped at a system call's entry
// (PTRACE_SYSCALL), as if that call had been interrupted with
// -ERESTARTNOINTR: the stub, once done, issues it again whatever signal
// came meanwhile, and the call runs as it would have (exec_hold.h).
user_regs_struct as_restarting(const user_regs_struct &entry);
// Whether interrupted_call needs the instruction bytes for these registers.
bool needs_instruction_bytes(const user_regs_struct &regs);

// The parts of an NT_X86_XSTATE image the stub relies on, checked.
struct XsaveImage {
  uint32_t size = 0;         // the image's size (XRSTOR reads within it)
  uint64_t features = 0;     // XCR0, as ptrace reports it
  uint64_t restore_mask = 0; // XRSTOR's RFBM
};
Result<XsaveImage> check_xsave_image(const std::vector<uint8_t> &xstate);

struct BootstrapInput {
  user_regs_struct regs{};     // the thread's, as stopped
  std::vector<uint8_t> xstate; // its NT_X86_XSTATE image
  InterruptedCall call;
  uint64_t stub = 0;        // the stub's address in the target
  uint64_t stub_masked = 0; // its entry after its first rt_sigprocmask
  uint64_t region = 0, region_size = 0;
  std::vector<uint8_t> block; // the loader block image
  uint64_t mask_all = 0;      // what the stub blocks
  uint64_t cookie = 0;
};

struct BootstrapFrame {
  uint64_t base = 0;          // where `bytes` go (64-byte aligned)
  std::vector<uint8_t> bytes; // [base, rsp - UBT_RED_ZONE - 8)
  uint64_t job = 0;           // == base
  // The commit's registers at a stop outside a system call's entry: the
  // stub blocks signals itself (one delivered before its first
  // instruction runs on top of it, as at any instruction of the thread's).
  user_regs_struct entry{};
  // At the syscall-entry stop of the thread's restarted call: that entry
  // becomes the stub's rt_sigprocmask, which blocks every signal before
  // the thread returns to user space, and returns into the stub.
  user_regs_struct entry_at_syscall{};
};

// Fails (with the reason) for a thread the stub cannot be given: an rsp
// that is not 8-byte aligned, an XSAVE image it cannot restore.
Result<BootstrapFrame> build_bootstrap_frame(const BootstrapInput &input);

} // namespace ubtrace::runtime::inject
