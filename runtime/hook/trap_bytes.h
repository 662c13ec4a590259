// Bytes that stop a thread which starts executing at them.
//
// A jump patched over several instructions leaves instruction starts inside
// the patch (P+1..P+4 fall inside the jump's rel32). A thread that had
// already run the first instructions when the patch went in (preempted
// there, or interrupted by a signal) resumes at such a start. The patcher
// makes the byte at every such start one of these, so that thread faults
// into the trap handler, which sends it to the relocated copy of the same
// instruction instead of decoding a jump's displacement.
//
// int3 raises SIGTRAP (rip after it); the others are opcodes that are
// invalid in 64-bit mode and raise SIGILL at rip (#UD), so a rel32 has many
// admissible values per byte and a trampoline can be placed within reach.
// trap_bytes_test executes each of them to check.
#pragma once

#include <array>
#include <cstdint>

namespace ubtrace::runtime::hook {

inline constexpr uint8_t kInt3 = 0xCC;

// Sorted. 0xCC and the single-byte #UD opcodes of 64-bit mode: PUSH/POP of
// ES, CS, SS, DS; DAA, DAS, AAA, AAS; PUSHA, POPA; INTO; AAM, AAD.
inline constexpr std::array<uint8_t, 17> kTrapBytes = {
    0x06, 0x07, 0x0E, 0x16, 0x17, 0x1E, 0x1F, 0x27, 0x2F,
    0x37, 0x3F, 0x60, 0x61, 0xCC, 0xCE, 0xD4, 0xD5,
};

constexpr bool is_trap_byte(uint8_t b) {
  for (uint8_t t : kTrapBytes)
    if (t == b)
      return true;
  return false;
}

} // namespace ubtrace::runtime::hook
