#include "runtime/symbols/x86_registers.h"

#include <array>
#include <asm/ptrace.h>
#include <cstddef>
#include <string>

namespace ubtrace::runtime::symbols {
namespace {

struct Names {
  X86Register reg;
  std::string_view q, d, w, b; // 64, 32, 16, 8-bit low
  std::string_view high;       // 8-bit high, if any
};

constexpr std::array<Names, 18> kNames{{
    {X86Register::Rax, "rax", "eax", "ax", "al", "ah"},
    {X86Register::Rbx, "rbx", "ebx", "bx", "bl", "bh"},
    {X86Register::Rcx, "rcx", "ecx", "cx", "cl", "ch"},
    {X86Register::Rdx, "rdx", "edx", "dx", "dl", "dh"},
    {X86Register::Rsi, "rsi", "esi", "si", "sil", ""},
    {X86Register::Rdi, "rdi", "edi", "di", "dil", ""},
    {X86Register::Rbp, "rbp", "ebp", "bp", "bpl", ""},
    {X86Register::Rsp, "rsp", "esp", "sp", "spl", ""},
    {X86Register::R8, "r8", "r8d", "r8w", "r8b", ""},
    {X86Register::R9, "r9", "r9d", "r9w", "r9b", ""},
    {X86Register::R10, "r10", "r10d", "r10w", "r10b", ""},
    {X86Register::R11, "r11", "r11d", "r11w", "r11b", ""},
    {X86Register::R12, "r12", "r12d", "r12w", "r12b", ""},
    {X86Register::R13, "r13", "r13d", "r13w", "r13b", ""},
    {X86Register::R14, "r14", "r14d", "r14w", "r14b", ""},
    {X86Register::R15, "r15", "r15d", "r15w", "r15b", ""},
    {X86Register::Rip, "rip", "eip", "", "", ""},
    {X86Register::Eflags, "rflags", "eflags", "flags", "", ""},
}};

#if defined(__x86_64__)
// The enum's order is the uapi pt_regs layout.
static_assert(offsetof(struct pt_regs, r15) == 0);
static_assert(offsetof(struct pt_regs, rbp) == 4 * 8);
static_assert(offsetof(struct pt_regs, rax) == 10 * 8);
static_assert(offsetof(struct pt_regs, rdi) == 14 * 8);
static_assert(offsetof(struct pt_regs, rip) == 16 * 8);
static_assert(offsetof(struct pt_regs, rsp) == 19 * 8);
static_assert(sizeof(struct pt_regs) == kPtRegsSize);
#endif

} // namespace

uint32_t pt_regs_offset(X86Register reg) {
  return static_cast<uint32_t>(reg) * 8;
}

std::string_view register_name(X86Register reg) {
  switch (reg) {
  case X86Register::OrigRax:
    return "orig_rax";
  case X86Register::Cs:
    return "cs";
  case X86Register::Ss:
    return "ss";
  case X86Register::R15:
  case X86Register::R14:
  case X86Register::R13:
  case X86Register::R12:
  case X86Register::Rbp:
  case X86Register::Rbx:
  case X86Register::R11:
  case X86Register::R10:
  case X86Register::R9:
  case X86Register::R8:
  case X86Register::Rax:
  case X86Register::Rcx:
  case X86Register::Rdx:
  case X86Register::Rsi:
  case X86Register::Rdi:
  case X86Register::Rip:
  case X86Register::Eflags:
  case X86Register::Rsp:
    for (const Names &n : kNames)
      if (n.reg == reg)
        return n.q;
    break;
  }
  return "?";
}

std::optional<RegisterOperand> parse_x86_register(std::string_view name) {
  for (const Names &n : kNames) {
    if (name == n.q)
      return RegisterOperand{n.reg, 8, false};
    if (name == n.d)
      return RegisterOperand{n.reg, 4, false};
    if (!n.w.empty() && name == n.w)
      return RegisterOperand{n.reg, 2, false};
    if (!n.b.empty() && name == n.b)
      return RegisterOperand{n.reg, 1, false};
    if (!n.high.empty() && name == n.high)
      return RegisterOperand{n.reg, 1, true};
  }
  return std::nullopt;
}

} // namespace ubtrace::runtime::symbols
