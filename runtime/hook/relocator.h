// Relocation of displaced instructions into a trampoline: the copy behaves
// as the originals did at their own addresses.
//
//   [rip+disp32] operands      disp32 recomputed for the new address
//   jmp/jcc rel8 or rel32      widened to rel32 (or an absolute jump when
//                              the target is out of reach)
//   call rel32 / call r/m      push the ORIGINAL return address, then jump:
//                              the callee returns straight into the
//                              function's own code, so stack walks and C++
//                              unwinding never see a trampoline address
//   ret, jmp r/m, ud2, ...     copied (nothing follows them)
//   everything else            copied byte for byte
// Refused: int3, loop/jrcxz/xbegin, far transfers, a call that is not the
// last displaced instruction (it would return into the patched bytes), and
// a call whose operand uses rsp.
#pragma once

#include "runtime/hook/code_buffer.h"
#include "runtime/hook/decoder.h"
#include "runtime/result.h"

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::hook {

// Emits `count` consecutive instructions into `code`, followed by a jump to
// `resume` (the first byte after them) when the last one falls through
// (resume 0: no jump; the caller's code follows).
// starts[i] receives the offset in `code` where instruction i begins.
Result<void> relocate(CodeBuffer &code, const DecodedInsn *insns, size_t count,
                      uint64_t resume, uint32_t *starts);

// Whether control can reach the instruction after this one in its
// relocated form (a relocated call does not come back to the trampoline).
bool relocated_falls_through(InsnKind kind);

} // namespace ubtrace::runtime::hook
