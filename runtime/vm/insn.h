// The eBPF instruction set as ubtrace's VM sees it: the instruction layout,
// opcode fields and the few constants of ISA v4 that older uapi headers lack.
// Classic opcode macros (BPF_ALU64, BPF_ADD, ...) come from <linux/bpf.h>.
#pragma once

#include <cstdint>
#include <linux/bpf.h>
#include <string>

namespace ubtrace::vm {

// One instruction slot, laid out exactly as `struct bpf_insn`.
struct Insn {
  uint8_t code = 0;
  uint8_t dst : 4 = 0;
  uint8_t src : 4 = 0;
  int16_t off = 0;
  int32_t imm = 0;
};
static_assert(sizeof(Insn) == 8, "Insn must match struct bpf_insn");

// ISA v4 (clang -mcpu=v4) additions, spelled out because linux-libc-dev 6.1
// predates them.
inline constexpr uint8_t kModeMemSx = 0x80; // BPF_MEMSX: sign-extending load
inline constexpr int16_t kOffSigned = 1;    // BPF_DIV/BPF_MOD off=1: sdiv/smod
inline constexpr uint8_t kOpJcond = 0xe0;   // may_goto (rejected)

// Sizes shared by verifier, interpreter and JIT.
inline constexpr int kNumRegs = 11;        // r0..r10
inline constexpr int kFramePointer = 10;   // r10
inline constexpr int32_t kStackSize = 512; // bytes per frame
inline constexpr int kMaxCallFrames = 8;   // main + nested calls/callbacks
inline constexpr uint32_t kMaxLoopIterations = 1u << 23; // bpf_loop bound

inline constexpr uint8_t insn_class(uint8_t code) {
  return code & 0x07;
}
inline constexpr uint8_t insn_op(uint8_t code) {
  return code & 0xf0;
}
inline constexpr uint8_t insn_source(uint8_t code) {
  return code & 0x08;
}
inline constexpr uint8_t insn_mode(uint8_t code) {
  return code & 0xe0;
}
inline constexpr uint8_t insn_size(uint8_t code) {
  return code & 0x18;
}

// Bytes moved by a load/store of BPF_SIZE `size_field`.
inline constexpr int access_bytes(uint8_t size_field) {
  switch (size_field) {
  case BPF_B:
    return 1;
  case BPF_H:
    return 2;
  case BPF_W:
    return 4;
  case BPF_DW:
    return 8;
  }
  return 0;
}

inline constexpr bool is_ld_imm64(const Insn &insn) {
  return insn.code == (BPF_LD | BPF_IMM | BPF_DW);
}
inline constexpr bool is_exit(const Insn &insn) {
  return insn.code == (BPF_JMP | BPF_EXIT);
}
inline constexpr bool is_call(const Insn &insn) {
  return insn.code == (BPF_JMP | BPF_CALL);
}
inline constexpr bool is_helper_call(const Insn &insn) {
  return is_call(insn) && insn.src == 0;
}
inline constexpr bool is_pseudo_call(const Insn &insn) {
  return is_call(insn) && insn.src == BPF_PSEUDO_CALL;
}
// Unconditional jump: `ja off` (JMP) or `gotol imm` (JMP32, v4).
inline constexpr bool is_unconditional_jump(const Insn &insn) {
  return insn.code == (BPF_JMP | BPF_JA) || insn.code == (BPF_JMP32 | BPF_JA);
}
// Any jump that may transfer control within the function (not call/exit).
inline constexpr bool is_jump(const Insn &insn) {
  uint8_t cls = insn_class(insn.code);
  if (cls != BPF_JMP && cls != BPF_JMP32)
    return false;
  uint8_t op = insn_op(insn.code);
  return op != BPF_CALL && op != BPF_EXIT;
}
// Target of a jump at `pc` (BPF_JMP32|BPF_JA keeps its offset in imm).
inline constexpr int64_t jump_target(const Insn &insn, int64_t pc) {
  if (insn.code == (BPF_JMP32 | BPF_JA))
    return pc + 1 + insn.imm;
  return pc + 1 + insn.off;
}

// The 64-bit immediate of an ld_imm64 pair.
inline constexpr uint64_t ld_imm64_value(const Insn &lo, const Insn &hi) {
  return static_cast<uint32_t>(lo.imm) |
         (static_cast<uint64_t>(static_cast<uint32_t>(hi.imm)) << 32);
}

// One line of objdump-like text for an instruction, for messages and tests.
std::string disassemble(const Insn *insns, size_t count, size_t pc);

} // namespace ubtrace::vm
