// Decoding of the instructions a patch displaces (Zydis 4), classified by
// how they depend on where they run.
#pragma once

#include "runtime/result.h"

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::hook {

enum class InsnKind : uint8_t {
  Plain,        // runs the same anywhere
  RipMemory,    // has a [rip+disp32] operand (lea/mov/cmp/...)
  JumpRel,      // jmp rel8/rel32
  CondJumpRel,  // jcc rel8/rel32
  CallRel,      // call rel32
  CallIndirect, // call r/m (may be [rip+disp32])
  JumpIndirect, // jmp r/m (may be [rip+disp32])
  Return,       // ret, ret imm16
  Endbr64,      // indirect-branch landing pad
  Int3,         // a breakpoint: someone else's, never displaced
  Stop,         // ends the flow without a target: ud2, hlt, ...
  Unsupported,  // IP-relative forms not relocated: loop/jrcxz/xbegin, far
};

struct DecodedInsn {
  uint64_t address = 0;
  uint8_t length = 0;
  InsnKind kind = InsnKind::Plain;
  uint8_t bytes[15] = {};
  // RipMemory, CallIndirect/JumpIndirect through [rip+disp32]: where the
  // disp32 sits in the instruction and the address it designates.
  bool rip_relative = false;
  uint8_t disp_offset = 0;
  uint64_t memory_target = 0;
  // JumpRel/CondJumpRel/CallRel: the branch target; CondJumpRel: the
  // condition code (low nibble of the short opcode).
  uint64_t branch_target = 0;
  uint8_t condition = 0;
  // CallIndirect: offset of the ModRM byte, and whether the operand uses
  // rsp (its value changes once a return address is pushed).
  uint8_t modrm_offset = 0;
  bool uses_rsp = false;
  const char *mnemonic = ""; // for messages
};

// Decodes one instruction at `code` (available bytes `avail`) that lives at
// `address`.
Result<DecodedInsn> decode_insn(const uint8_t *code, size_t avail,
                                uint64_t address);

// Whether control never falls through past the instruction.
bool ends_flow(InsnKind kind);

} // namespace ubtrace::runtime::hook
