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
  // It reads or writes x87, MMX, vector or mask registers.
  bool vector_state = false;
  const char *mnemonic = ""; // for messages
};

// Decodes one instruction at `code` (available bytes `avail`) that lives at
// `address`.
Result<DecodedInsn> decode_insn(const uint8_t *code, size_t avail,
                                uint64_t address);

// Whether control never falls through past the instruction.
bool ends_flow(InsnKind kind);

// Whether any instruction of the mapped code [start, start + size), decoded
// from its start, touches x87, MMX, vector or mask registers (true also
// when some bytes do not decode). A function for which this is false, and
// that is only ever called as the ABI says (which makes every vector
// register caller-saved), has no vector value live anywhere inside it.
bool code_touches_vector_state(uint64_t start, uint64_t size);

} // namespace ubtrace::runtime::hook
