// x86-64 registers as USDT argument specs name them ("%edi", "%r8b",
// "%ah") and where each lives in the register frame a probe receives: the
// kernel's `struct pt_regs` (the layout BPF programs read, and the one the
// inline hooks fill: runtime/hook/pt_regs.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ubtrace::runtime::symbols {

// In pt_regs order: the register at index i is at byte offset 8 * i.
enum class X86Register : uint8_t {
  R15,
  R14,
  R13,
  R12,
  Rbp,
  Rbx,
  R11,
  R10,
  R9,
  R8,
  Rax,
  Rcx,
  Rdx,
  Rsi,
  Rdi,
  OrigRax,
  Rip,
  Cs,
  Eflags,
  Rsp,
  Ss,
};

inline constexpr uint32_t kPtRegsSize = 21 * 8;

// Byte offset of the register's 64-bit slot in pt_regs.
uint32_t pt_regs_offset(X86Register reg);
// Its 64-bit name: "rax", "r8", "rip".
std::string_view register_name(X86Register reg);

// A register as an operand names it: which slot, how many low bytes
// ("%eax": 4), and whether it is a legacy high byte ("%ah": bits 8..15).
struct RegisterOperand {
  X86Register reg = X86Register::Rax;
  uint8_t width = 8;
  bool high_byte = false;
  bool operator==(const RegisterOperand &) const = default;
};

// "rax", "eax", "ax", "al", "ah", "r8d", "sil", "rip", ... (no '%').
std::optional<RegisterOperand> parse_x86_register(std::string_view name);

} // namespace ubtrace::runtime::symbols
