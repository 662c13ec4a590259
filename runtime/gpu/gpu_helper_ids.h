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

// The kernel the probe runs in: r1 = the probe's ctx. Returns the context
// block's kernel_id (probe_abi.h: FNV-1a 64 of the mangled name). `func`
// in GPU probes is a usym { kernel_id, kGpuFuncPid }: the CLI turns the id
// into the kernel's name (backends/gpu/kernel_names.h) when it prints.
inline constexpr int32_t kHelperGpuKernelId = abi::kHelperGpuGlobalTimer + 3;

// `probe` in GPU probes: r1 = the probe's ctx, r2 = the id of the probe
// block's first attach point (its index in Bundle::probes). Returns the
// id of the attach point that fired: the NVPTX target picks it by the
// context's site (entry or exit) and kernel_id from the table
// NvptxOptions::probe_ids holds (runtime/jit/nvptx_target.h).
inline constexpr int32_t kHelperGpuProbeId = abi::kHelperGpuGlobalTimer + 4;

// `probe` for a kernel the CLI did not know when it compiled (a module
// loaded from a file no probe names, or built at run time), in a block
// whose attach points expand per kernel: the device cannot pick the
// expanded name's id, so it returns this flag, the site, the block and the
// low 32 bits of the kernel id. The CLI names it once the agent has
// reported the kernel (backends/gpu/gpu_backend.h).
inline constexpr uint64_t kLateProbeIdFlag = 1ull << 63;
inline constexpr uint64_t late_probe_id(uint64_t block, uint32_t site,
                                        uint64_t kernel_id) {
  return kLateProbeIdFlag | (uint64_t(site & 1) << 62) |
         ((block & 0x3fffffffull) << 32) | (kernel_id & 0xffffffffull);
}
inline constexpr uint64_t late_probe_block(uint64_t id) {
  return (id >> 32) & 0x3fffffffull;
}
inline constexpr uint32_t late_probe_site(uint64_t id) {
  return uint32_t(id >> 62) & 1;
}

// What `func` of a GPU probe stores where a usym holds the process id: no
// process has it (pids are below 2^22, and the sign bit makes it negative,
// which host symbolisers take as "no process"), so a symboliser that does
// not know GPU kernels prints the kernel_id in hex rather than a wrong
// host symbol.
inline constexpr int64_t kGpuFuncPid =
    static_cast<int64_t>(0x8000000000000000ull | 0x6b65726eull); // "kern"

} // namespace ubtrace::runtime::gpu
