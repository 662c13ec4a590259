#include "runtime/hook/relocator.h"

#include <cstdio>
#include <string>

namespace ubtrace::runtime::hook {
namespace {

Error insn_error(const DecodedInsn &in, const char *why) {
  char msg[192];
  snprintf(msg, sizeof msg, "cannot relocate '%s' at 0x%llx: %s", in.mnemonic,
           static_cast<unsigned long long>(in.address), why);
  return make_error(msg);
}

// Copies the instruction, re-aiming its [rip+disp32] operand (if any) at the
// same address from its new place.
Result<void> copy_fixing_rip(CodeBuffer &code, const DecodedInsn &in,
                             const uint8_t *bytes) {
  uint64_t at = code.here();
  size_t offset = code.size();
  code.bytes(bytes, in.length);
  if (!in.rip_relative)
    return {};
  uint64_t next = at + in.length;
  if (!fits_rel32(in.memory_target, next))
    return insn_error(in, "its [rip] operand is out of reach of the "
                          "trampoline");
  code.patch_u32(offset + in.disp_offset,
                 static_cast<uint32_t>(in.memory_target - next));
  return {};
}

// push qword [rip+lit] ... lit: dq return_address. The literal goes right
// after `emit_jump`, which never falls through.
template <class EmitJump>
Result<void> emit_call(CodeBuffer &code, uint64_t return_address,
                       EmitJump emit_jump) {
  size_t push_at = code.size();
  x86::push_rip_qword(code, 0);
  Result<void> jumped = emit_jump();
  if (!jumped)
    return jumped;
  uint64_t literal = code.here();
  code.u64(return_address);
  uint64_t push_end = code.base() + push_at + 6;
  code.patch_u32(push_at + 2, static_cast<uint32_t>(literal - push_end));
  return {};
}

} // namespace

bool relocated_falls_through(InsnKind kind) {
  switch (kind) {
  case InsnKind::CallRel:
  case InsnKind::CallIndirect:
    return false;
  case InsnKind::Plain:
  case InsnKind::RipMemory:
  case InsnKind::JumpRel:
  case InsnKind::CondJumpRel:
  case InsnKind::JumpIndirect:
  case InsnKind::Return:
  case InsnKind::Endbr64:
  case InsnKind::Int3:
  case InsnKind::Stop:
  case InsnKind::Unsupported:
    return !ends_flow(kind);
  }
  return false;
}

Result<void> relocate(CodeBuffer &code, const DecodedInsn *insns, size_t count,
                      uint64_t resume, uint32_t *starts) {
  for (size_t i = 0; i < count; ++i) {
    const DecodedInsn &in = insns[i];
    starts[i] = static_cast<uint32_t>(code.size());
    bool last = i + 1 == count;
    uint64_t return_address = in.address + in.length;
    switch (in.kind) {
    case InsnKind::Plain:
    case InsnKind::Endbr64:
    case InsnKind::Return:
    case InsnKind::Stop:
      code.bytes(in.bytes, in.length);
      break;
    case InsnKind::RipMemory:
    case InsnKind::JumpIndirect: {
      Result<void> r = copy_fixing_rip(code, in, in.bytes);
      if (!r)
        return r;
      break;
    }
    case InsnKind::JumpRel:
      x86::jmp(code, in.branch_target);
      break;
    case InsnKind::CondJumpRel:
      x86::jcc(code, in.condition, in.branch_target);
      break;
    case InsnKind::CallRel: {
      if (!last || !resume)
        return insn_error(in, "a call must be the last displaced instruction");
      Result<void> r = emit_call(code, return_address, [&]() -> Result<void> {
        x86::jmp(code, in.branch_target);
        return {};
      });
      if (!r)
        return r;
      break;
    }
    case InsnKind::CallIndirect: {
      if (!last || !resume)
        return insn_error(in, "a call must be the last displaced instruction");
      if (in.uses_rsp)
        return insn_error(in, "its operand depends on rsp");
      // The same operand with /4 (jmp) instead of /2 (call) in ModRM.reg.
      uint8_t as_jump[15];
      for (int b = 0; b < in.length; ++b)
        as_jump[b] = in.bytes[b];
      as_jump[in.modrm_offset] =
          static_cast<uint8_t>((as_jump[in.modrm_offset] & ~0x38) | (4 << 3));
      Result<void> r = emit_call(code, return_address, [&]() -> Result<void> {
        return copy_fixing_rip(code, in, as_jump);
      });
      if (!r)
        return r;
      break;
    }
    case InsnKind::Int3:
      return insn_error(in, "it is a breakpoint (int3) of another tool");
    case InsnKind::Unsupported:
      return insn_error(in, "this form of instruction is not relocated");
    }
    if ((!last || !resume) && ends_flow(in.kind))
      return insn_error(in, "control ends here before the patch does");
  }
  if (resume && count > 0 && relocated_falls_through(insns[count - 1].kind))
    x86::jmp(code, resume);
  if (!code.ok())
    return make_error("trampoline code buffer overflow");
  return {};
}

} // namespace ubtrace::runtime::hook
