// disassemble(): one instruction in the syntax llvm-objdump uses for BPF, so
// verifier logs and test failures read like the objdump of the object.
#include "runtime/vm/insn.h"

#include <cstdio>
#include <string>

namespace ubtrace::vm {
namespace {

const char *alu_op_text(uint8_t op, bool is_signed) {
  switch (op) {
  case BPF_ADD:
    return "+=";
  case BPF_SUB:
    return "-=";
  case BPF_MUL:
    return "*=";
  case BPF_DIV:
    return is_signed ? "s/=" : "/=";
  case BPF_OR:
    return "|=";
  case BPF_AND:
    return "&=";
  case BPF_LSH:
    return "<<=";
  case BPF_RSH:
    return ">>=";
  case BPF_MOD:
    return is_signed ? "s%=" : "%=";
  case BPF_XOR:
    return "^=";
  case BPF_MOV:
    return "=";
  case BPF_ARSH:
    return "s>>=";
  }
  return "?=";
}

const char *jmp_op_text(uint8_t op) {
  switch (op) {
  case BPF_JEQ:
    return "==";
  case BPF_JGT:
    return ">";
  case BPF_JGE:
    return ">=";
  case BPF_JSET:
    return "&";
  case BPF_JNE:
    return "!=";
  case BPF_JSGT:
    return "s>";
  case BPF_JSGE:
    return "s>=";
  case BPF_JLT:
    return "<";
  case BPF_JLE:
    return "<=";
  case BPF_JSLT:
    return "s<";
  case BPF_JSLE:
    return "s<=";
  }
  return "?";
}

const char *size_text(uint8_t size) {
  switch (size) {
  case BPF_B:
    return "u8";
  case BPF_H:
    return "u16";
  case BPF_W:
    return "u32";
  case BPF_DW:
    return "u64";
  }
  return "u?";
}

std::string fmt(const char *format, auto... args) {
  char buf[128];
  snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

std::string disasm_alu(const Insn &in) {
  bool is64 = insn_class(in.code) == BPF_ALU64;
  char r = is64 ? 'r' : 'w';
  uint8_t op = insn_op(in.code);
  if (op == BPF_NEG)
    return fmt("%c%d = -%c%d", r, in.dst, r, in.dst);
  if (op == BPF_END) {
    const char *kind = is64                            ? "bswap"
                       : insn_source(in.code) == BPF_X ? "be"
                                                       : "le";
    return fmt("r%d = %s%d r%d", in.dst, kind, in.imm, in.dst);
  }
  if (op == BPF_MOV && in.off != 0)
    return fmt("%c%d = (s%d)%c%d", r, in.dst, in.off, r, in.src);
  const char *text = alu_op_text(op, in.off == kOffSigned);
  if (insn_source(in.code) == BPF_X)
    return fmt("%c%d %s %c%d", r, in.dst, text, r, in.src);
  return fmt("%c%d %s %d", r, in.dst, text, in.imm);
}

std::string disasm_jmp(const Insn *insns, size_t count, size_t pc) {
  const Insn &in = insns[pc];
  bool is32 = insn_class(in.code) == BPF_JMP32;
  uint8_t op = insn_op(in.code);
  if (op == BPF_EXIT)
    return "exit";
  if (op == BPF_CALL) {
    if (in.src == BPF_PSEUDO_CALL)
      return fmt("call pc%+d", in.imm + 1);
    return fmt("call %d", in.imm);
  }
  if (op == BPF_JA)
    return fmt("goto %+lld", (long long)(jump_target(in, 0) - 1));
  char r = is32 ? 'w' : 'r';
  if (insn_source(in.code) == BPF_X)
    return fmt("if %c%d %s %c%d goto %+d", r, in.dst, jmp_op_text(op), r,
               in.src, in.off);
  return fmt("if %c%d %s %d goto %+d", r, in.dst, jmp_op_text(op), in.imm,
             in.off);
}

std::string disasm_mem(const Insn &in) {
  uint8_t cls = insn_class(in.code);
  const char *sz = size_text(insn_size(in.code));
  if (cls == BPF_LDX) {
    bool sx = insn_mode(in.code) == kModeMemSx;
    return fmt("r%d = *(%s%s *)(r%d %+d)", in.dst, sx ? "s" : "",
               sx ? sz + 1 : sz, in.src, in.off);
  }
  if (cls == BPF_ST)
    return fmt("*(%s *)(r%d %+d) = %d", sz, in.dst, in.off, in.imm);
  if (insn_mode(in.code) == BPF_ATOMIC) {
    const char *name = "atomic?";
    switch (in.imm) {
    case BPF_ADD:
      name = "add";
      break;
    case BPF_ADD | BPF_FETCH:
      name = "fetch_add";
      break;
    case BPF_OR:
      name = "or";
      break;
    case BPF_OR | BPF_FETCH:
      name = "fetch_or";
      break;
    case BPF_AND:
      name = "and";
      break;
    case BPF_AND | BPF_FETCH:
      name = "fetch_and";
      break;
    case BPF_XOR:
      name = "xor";
      break;
    case BPF_XOR | BPF_FETCH:
      name = "fetch_xor";
      break;
    case BPF_XCHG:
      name = "xchg";
      break;
    case BPF_CMPXCHG:
      name = "cmpxchg";
      break;
    }
    return fmt("lock %s *(%s *)(r%d %+d), r%d", name, sz, in.dst, in.off,
               in.src);
  }
  return fmt("*(%s *)(r%d %+d) = r%d", sz, in.dst, in.off, in.src);
}

} // namespace

std::string disassemble(const Insn *insns, size_t count, size_t pc) {
  if (pc >= count)
    return "<out of range>";
  const Insn &in = insns[pc];
  switch (insn_class(in.code)) {
  case BPF_ALU:
  case BPF_ALU64:
    return disasm_alu(in);
  case BPF_JMP:
  case BPF_JMP32:
    return disasm_jmp(insns, count, pc);
  case BPF_LDX:
  case BPF_ST:
  case BPF_STX:
    return disasm_mem(in);
  case BPF_LD:
    if (is_ld_imm64(in) && pc + 1 < count) {
      uint64_t value = ld_imm64_value(in, insns[pc + 1]);
      switch (in.src) {
      case BPF_PSEUDO_MAP_FD:
        return fmt("r%d = map[%d] ll", in.dst, in.imm);
      case BPF_PSEUDO_MAP_VALUE:
        return fmt("r%d = map[%d] + %d ll", in.dst, in.imm, insns[pc + 1].imm);
      case BPF_PSEUDO_FUNC:
        return fmt("r%d = func pc%+d ll", in.dst, in.imm + 1);
      }
      return fmt("r%d = 0x%llx ll", in.dst, (unsigned long long)value);
    }
    break;
  }
  return fmt("<unknown opcode 0x%02x>", in.code);
}

} // namespace ubtrace::vm
