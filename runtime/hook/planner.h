// The patch plan for an address: which bytes a hook displaces and how it
// is entered.
//
//   Jump  a 5-byte `jmp rel32` at patch_start (after an endbr64 at the
//         address, which stays first so indirect calls still land) enters
//         a trampoline; the instructions it covers run relocated there.
//   Trap  a single int3 at patch_start; the trap handler runs the probe and
//         the covered instruction out of line. Used when a jump cannot be:
//         the function is shorter than 5 bytes, ends (ret/jmp) before 5
//         bytes, a branch of the function lands inside the 5 bytes, a call
//         is not the last covered instruction, or no trampoline memory is
//         within reach. Costs a signal per hit (microseconds).
#pragma once

#include "runtime/hook/decoder.h"
#include "runtime/hook/memory_map.h"
#include "runtime/result.h"

#include <cstdint>
#include <string>

namespace ubtrace::runtime::hook {

enum class PatchMode : uint8_t { Jump, Trap };

inline constexpr uint32_t kJumpSize = 5;
inline constexpr uint32_t kMaxDisplaced = kJumpSize; // each insn >= 1 byte

struct FunctionBounds {
  uint64_t start = 0; // 0: unknown
  uint64_t size = 0;  // 0: unknown
};

struct PatchPlan {
  PatchMode mode = PatchMode::Jump;
  uint64_t address = 0;     // as requested; handlers see it as rip
  uint64_t patch_start = 0; // address, or address + 4 after an endbr64
  uint32_t displaced_bytes = 0;
  uint32_t insn_count = 0;
  DecodedInsn insns[kMaxDisplaced];
  std::string trap_reason; // Trap: why no jump
  // The address is its function's first byte (function bounds were given):
  // only argument registers can be live there.
  bool at_function_entry = false;

  uint64_t patch_end() const { return patch_start + displaced_bytes; }
};

// Plans a hook at `address` from the code currently there. Fails (with the
// reason) when not even the trap path can run it. A Jump plan covers at
// least 5 bytes, and at least up to `cover_to` when that is further (a
// rewritten system call: the instructions before it and itself).
Result<PatchPlan> plan_patch(uint64_t address, FunctionBounds function,
                             const MemoryMap &map, bool shadow_stack,
                             uint64_t cover_to = 0);

// Turns a Jump plan into the Trap plan for the same address (when the
// trampoline cannot be placed).
Result<PatchPlan> plan_as_trap(const PatchPlan &jump_plan, std::string reason,
                               bool shadow_stack);

} // namespace ubtrace::runtime::hook
