// The register frame a hook handler receives: the x86-64 kernel's uapi
// `struct pt_regs`, field for field, so eBPF programs compiled against the
// kernel layout (arg0 = rdi at offset 112, retval = rax at 80, ...) read it
// unchanged. pt_regs.cpp checks the offsets against <asm/ptrace.h>.
//
// What the fields hold when a handler runs:
//   entry hook   rip = the probed address (the function's address even when
//                the patch sits after its endbr64), rsp = the stack pointer
//                at that address (at a function entry it points at the
//                return address), orig_rax = -1, cs/ss = this process's
//                user selectors, eflags = the flags at the probe.
//   return hook  rax/rdx = the return value, rip = the address the function
//                returns to, rsp = the stack pointer after the return (the
//                kernel's uretprobe shows the same two values).
// Changes a handler makes to general registers and flags are written back;
// changes to rip, rsp, cs, ss and orig_rax are ignored.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::hook {

struct PtRegs {
  uint64_t r15;
  uint64_t r14;
  uint64_t r13;
  uint64_t r12;
  uint64_t rbp;
  uint64_t rbx;
  uint64_t r11;
  uint64_t r10;
  uint64_t r9;
  uint64_t r8;
  uint64_t rax;
  uint64_t rcx;
  uint64_t rdx;
  uint64_t rsi;
  uint64_t rdi;
  uint64_t orig_rax;
  uint64_t rip;
  uint64_t cs;
  uint64_t eflags;
  uint64_t rsp;
  uint64_t ss;
};

// Offsets the trampolines' machine code uses.
namespace pt_regs_offset {
inline constexpr int32_t kRax = offsetof(PtRegs, rax);
inline constexpr int32_t kOrigRax = offsetof(PtRegs, orig_rax);
inline constexpr int32_t kRip = offsetof(PtRegs, rip);
inline constexpr int32_t kCs = offsetof(PtRegs, cs);
inline constexpr int32_t kEflags = offsetof(PtRegs, eflags);
inline constexpr int32_t kRsp = offsetof(PtRegs, rsp);
inline constexpr int32_t kSs = offsetof(PtRegs, ss);
} // namespace pt_regs_offset

inline constexpr int32_t kPtRegsSize = sizeof(PtRegs);
static_assert(kPtRegsSize == 21 * 8);
// A handler may use this many bytes right after its PtRegs as scratch: a
// probe's context can extend the registers in place instead of copying
// them (the agent's HostProbeCtx does).
inline constexpr int32_t kRegsTailRoom = 128;

// A probe handler: JIT'd eBPF (through a thin C shim) in ubtrace. It runs on
// the traced thread, must not throw, and must be async-signal-safe (the trap
// path calls it from a signal handler).
using Handler = void (*)(PtRegs *regs, void *user);

} // namespace ubtrace::runtime::hook
