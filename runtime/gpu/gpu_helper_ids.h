// Helper ids that only GPU probes call, next to runtime/abi.h's GPU special
// registers (kHelperGpuThreadIdxX .. kHelperGpuGlobalTimer). Codegen emits
// them; the NVPTX target (runtime/jit/nvptx_helpers.h) lowers them. They
// belong in abi.h's Helper list; they live here until it takes them.
#pragma once

#include "runtime/abi.h"

#include <cstdint>

namespace ubtrace::runtime::gpu {

// Device atomic min/max of an aggregation's value word:
//   r1 = map, r2 = the map value (its first u64), r3 = the sample,
//   r4 = 1 when the comparison is signed. Returns 0.
// BPF has no atomic min/max instruction, and a compare-and-swap loop in
// BPF would make every thread of a warp retry; atom.min/atom.max do it in
// one instruction. The device map starts min/max values at the identity
// (device_maps_abi.h), so the probe needs no is-set test first.
inline constexpr int32_t kHelperGpuAtomicMin = abi::kHelperGpuGlobalTimer + 1;
inline constexpr int32_t kHelperGpuAtomicMax = abi::kHelperGpuGlobalTimer + 2;

} // namespace ubtrace::runtime::gpu
