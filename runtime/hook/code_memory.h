// Executable memory for trampolines.
//
// Chunks (up to 64 KiB) are mapped read+execute near the code they serve,
// in free address ranges found in /proc/self/maps, with MAP_FIXED_NOREPLACE
// so nothing of the process is ever clobbered. Blocks are carved out of the
// chunks and never freed: a thread may still be running a trampoline long
// after its hook is gone, so a site keeps its trampoline for the life of
// the process and reuses it when hooked again. Writing a block makes its
// pages read+write+execute for the duration (other trampolines in the same
// pages keep running) and read+execute again after.
//
// Not thread-safe: the installer calls it under its lock.
#pragma once

#include "runtime/hook/memory_map.h"
#include "runtime/hook/rel32_constraint.h"
#include "runtime/result.h"

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::hook {

struct CodeRequest {
  uint32_t size = 0;
  // The block must lie within [lo, hi): the reach of the jump into it and
  // of its relocated [rip] operands. near == 0: anywhere.
  uint64_t lo = kLowestMappable;
  uint64_t hi = kUserSpaceEnd;
  uint64_t near = 0;
  // The block's address minus rel_base must satisfy the constraint (the
  // jump's rel32; rel_base is the address after the jump).
  uint64_t rel_base = 0;
  Rel32Constraint constraint;
};

Result<uint64_t> allocate_code(const CodeRequest &request,
                               const MemoryMap &map);

// Copies `bytes` into a block returned by allocate_code.
Result<void> write_code(uint64_t address, const uint8_t *bytes, size_t size);

// Bytes of chunks mapped so far (for stats and tests).
uint64_t code_memory_mapped_bytes();

} // namespace ubtrace::runtime::hook
