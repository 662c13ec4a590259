// Decoding an opcode word (`ld.global.nc.v4.f32`, `setp.lt.and.s32`) into
// an instruction's opcode and modifiers.
#pragma once

#include "tests/gpu/ptxsim/ir.h"

#include <string>
#include <string_view>

namespace ubtrace::ptxsim {

// Fills inst's op and modifiers from the opcode word. False with `why` set
// when the opcode or one of its modifiers is not supported. `is_call` is
// set for call (its operands have their own syntax).
bool decode_opcode(std::string_view word, Inst &inst, bool &is_call,
                   std::string &why);

// A type name without its dot (`u32`), or Ty::None.
Ty parse_type(std::string_view name);

} // namespace ubtrace::ptxsim
