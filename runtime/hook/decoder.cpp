#include "runtime/hook/decoder.h"

#include <Zydis/Zydis.h>
#include <cstdio>

namespace ubtrace::runtime::hook {
namespace {

bool operand_uses_rsp(const ZydisDecodedOperand &op) {
  if (op.type == ZYDIS_OPERAND_TYPE_REGISTER)
    return op.reg.value == ZYDIS_REGISTER_RSP;
  if (op.type == ZYDIS_OPERAND_TYPE_MEMORY)
    return op.mem.base == ZYDIS_REGISTER_RSP ||
           op.mem.index == ZYDIS_REGISTER_RSP;
  return false;
}

InsnKind classify(const ZydisDecodedInstruction &in) {
  switch (in.mnemonic) {
  case ZYDIS_MNEMONIC_ENDBR64:
    return InsnKind::Endbr64;
  case ZYDIS_MNEMONIC_INT3:
    return InsnKind::Int3;
  case ZYDIS_MNEMONIC_RET:
    return in.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR ? InsnKind::Unsupported
                                                        : InsnKind::Return;
  case ZYDIS_MNEMONIC_UD0:
  case ZYDIS_MNEMONIC_UD1:
  case ZYDIS_MNEMONIC_UD2:
  case ZYDIS_MNEMONIC_HLT:
  case ZYDIS_MNEMONIC_IRET:
  case ZYDIS_MNEMONIC_IRETD:
  case ZYDIS_MNEMONIC_IRETQ:
  case ZYDIS_MNEMONIC_SYSRET:
  case ZYDIS_MNEMONIC_SYSEXIT:
    return InsnKind::Stop;
  case ZYDIS_MNEMONIC_LOOP:
  case ZYDIS_MNEMONIC_LOOPE:
  case ZYDIS_MNEMONIC_LOOPNE:
  case ZYDIS_MNEMONIC_JCXZ:
  case ZYDIS_MNEMONIC_JECXZ:
  case ZYDIS_MNEMONIC_JRCXZ:
  case ZYDIS_MNEMONIC_XBEGIN:
    return InsnKind::Unsupported;
  default:
    break;
  }
  if (in.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
    return InsnKind::Unsupported;
  switch (in.meta.category) {
  case ZYDIS_CATEGORY_UNCOND_BR:
    return in.raw.imm[0].is_relative ? InsnKind::JumpRel
                                     : InsnKind::JumpIndirect;
  case ZYDIS_CATEGORY_COND_BR:
    return InsnKind::CondJumpRel;
  case ZYDIS_CATEGORY_CALL:
    return in.raw.imm[0].is_relative ? InsnKind::CallRel
                                     : InsnKind::CallIndirect;
  default:
    return InsnKind::Plain;
  }
}

// Whether the instruction reads or writes x87, MMX, SSE/AVX/AVX-512 or
// mask registers (or saves, restores or clears them).
bool touches_vector_state(const ZydisDecodedInstruction &in,
                          const ZydisDecodedOperand *ops) {
  switch (in.meta.category) {
  case ZYDIS_CATEGORY_AVX:
  case ZYDIS_CATEGORY_AVX2:
  case ZYDIS_CATEGORY_AVX512:
  case ZYDIS_CATEGORY_SSE:
  case ZYDIS_CATEGORY_MMX:
  case ZYDIS_CATEGORY_X87_ALU:
  case ZYDIS_CATEGORY_FCMOV:
  case ZYDIS_CATEGORY_KMASK:
  case ZYDIS_CATEGORY_XSAVE:
  case ZYDIS_CATEGORY_XSAVEOPT:
  case ZYDIS_CATEGORY_AMX_TILE:
    return true;
  default:
    break;
  }
  for (int i = 0; i < in.operand_count; ++i) {
    if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER)
      continue;
    switch (ZydisRegisterGetClass(ops[i].reg.value)) {
    case ZYDIS_REGCLASS_X87:
    case ZYDIS_REGCLASS_MMX:
    case ZYDIS_REGCLASS_XMM:
    case ZYDIS_REGCLASS_YMM:
    case ZYDIS_REGCLASS_ZMM:
    case ZYDIS_REGCLASS_MASK:
    case ZYDIS_REGCLASS_TMM:
      return true;
    default:
      break;
    }
  }
  return false;
}

} // namespace

bool ends_flow(InsnKind kind) {
  switch (kind) {
  case InsnKind::JumpRel:
  case InsnKind::JumpIndirect:
  case InsnKind::Return:
  case InsnKind::Int3:
  case InsnKind::Stop:
    return true;
  case InsnKind::Plain:
  case InsnKind::RipMemory:
  case InsnKind::CondJumpRel:
  case InsnKind::CallRel:
  case InsnKind::CallIndirect:
  case InsnKind::Endbr64:
  case InsnKind::Unsupported:
    return false;
  }
  return false;
}

Result<DecodedInsn> decode_insn(const uint8_t *code, size_t avail,
                                uint64_t address) {
  ZydisDecoder decoder; // cheap to set up; no static (no guard variables)
  ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction in;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  if (avail > 15)
    avail = 15;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, code, avail, &in, ops))) {
    char msg[96];
    snprintf(msg, sizeof msg, "cannot decode the instruction at 0x%llx",
             static_cast<unsigned long long>(address));
    return make_error(msg);
  }
  DecodedInsn d;
  d.address = address;
  d.length = in.length;
  for (int i = 0; i < in.length; ++i)
    d.bytes[i] = code[i];
  d.kind = classify(in);
  d.vector_state = touches_vector_state(in, ops);
  d.mnemonic = ZydisMnemonicGetString(in.mnemonic);
  if (in.attributes & ZYDIS_ATTRIB_HAS_MODRM)
    d.modrm_offset = in.raw.modrm.offset;

  for (int i = 0; i < in.operand_count; ++i) {
    const ZydisDecodedOperand &op = ops[i];
    if (op.visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN)
      continue;
    if (operand_uses_rsp(op))
      d.uses_rsp = true;
    if (op.type == ZYDIS_OPERAND_TYPE_MEMORY &&
        op.mem.base == ZYDIS_REGISTER_RIP) {
      d.rip_relative = true;
      d.disp_offset = in.raw.disp.offset;
      d.memory_target = address + in.length + op.mem.disp.value;
    }
  }
  if (d.rip_relative && in.raw.disp.size != 32)
    d.kind = InsnKind::Unsupported; // cannot happen in 64-bit mode
  if (d.kind == InsnKind::Plain && d.rip_relative)
    d.kind = InsnKind::RipMemory;

  switch (d.kind) {
  case InsnKind::JumpRel:
  case InsnKind::CondJumpRel:
  case InsnKind::CallRel:
    d.branch_target = address + in.length + in.raw.imm[0].value.s;
    break;
  case InsnKind::Plain:
  case InsnKind::RipMemory:
  case InsnKind::CallIndirect:
  case InsnKind::JumpIndirect:
  case InsnKind::Return:
  case InsnKind::Endbr64:
  case InsnKind::Int3:
  case InsnKind::Stop:
  case InsnKind::Unsupported:
    break;
  }
  if (d.kind == InsnKind::CondJumpRel) {
    // jcc rel8 is 7x, jcc rel32 is 0F 8x; the low nibble is the condition.
    // Anything else in this category (loop, jrcxz) was sorted out above.
    uint8_t op = in.opcode;
    if (in.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && (op & 0xF0) == 0x70)
      d.condition = op & 0xF;
    else if (in.opcode_map == ZYDIS_OPCODE_MAP_0F && (op & 0xF0) == 0x80)
      d.condition = op & 0xF;
    else
      d.kind = InsnKind::Unsupported;
  }
  return d;
}

} // namespace ubtrace::runtime::hook

namespace ubtrace::runtime::hook {

bool code_touches_vector_state(uint64_t start, uint64_t size) {
  uint64_t pc = start, end = start + size;
  while (pc < end) {
    Result<DecodedInsn> in =
        decode_insn(reinterpret_cast<const uint8_t *>(pc), end - pc, pc);
    if (!in || in->vector_state)
      return true; // undecodable: may be anything
    pc += in->length;
  }
  return false;
}

} // namespace ubtrace::runtime::hook
