// The lifter's third target: GPU probes as PTX. Each probe's verified eBPF
// is lifted (lifter.h) with NvptxHelpers (nvptx_helpers.h), linked with the
// device runtime (runtime/gpu/device_runtime.c: maps, events ring,
// aggregating atomics), optimised, and wrapped in a PTX `.func` that follows
// runtime/gpu/probe_abi.h:
//
//   .func __ubt_probe_p0(.param .b64 ctx)   // the probe reads the context
//   .func __ubt_probe_p1()                  // it reads no argument
//
// Device maps are reached through UBT_GPU_MAP_TABLE, an internal `.const`
// u64 table (one entry per map of the bundle) whose values the agent bakes
// into the PTX per CUDA context (bake_map_table in runtime/gpu) before the
// rewriter merges the probes into the application's modules.
//
// The PTX targets sm_70 with PTX ISA 7.0 by default: the merge refuses a
// probe newer than the module it goes into, and every CUDA 12/13 driver
// JITs PTX 7.0 (warp-aggregated atomics need sm_70's match.any.sync).
//
// Reads through pointers (probe_read*, probe_read*_str: `*p`, `p->f`,
// `p[i]`, str(p), buf(p, n)) are loads from the device's generic address space,
// bounded by the size read; null and the first 64 KiB read as a fault
// (zeroes, an empty string). A GPU cannot catch a fault, so any other bad
// pointer ends the traced kernel with an illegal-address error
// (runtime/gpu/device_runtime.c).
//
// Everything a probe cannot do on the GPU fails the compile with the PC and
// the reason (e.g. "PC 12: helper get_stack (67) is not available in GPU
// probes"): stacks, signals, for-each over a map.
#pragma once

#include "runtime/gpu/device_maps.h"
#include "runtime/jit/lifter.h"
#include "runtime/jit/optimize.h"
#include "runtime/vm/helpers.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::jit {

struct NvptxProbe {
  const vm::VerifiedProgram *program = nullptr;
  std::string function; // the PTX .func to define ("__ubt_probe_p0")
};

// What GPU probes see of the host: the traced process, as constants.
struct NvptxHostInfo {
  uint32_t pid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string comm; // up to 15 bytes are kept
};

// `probe` in GPU probes (runtime/gpu/gpu_helper_ids.h's kHelperGpuProbeId):
// in the probe block whose first attach point is `block`, a thread at
// `site` in the kernel `kernel_id` (any kernel when `any_kernel`) gets
// `id`. Exact rules win over any-kernel ones; the first match wins. With no
// rule at all, `probe` is `block`. An any-kernel rule with `late_kernel`
// gives runtime::gpu::late_probe_id(block, site, the context's kernel id)
// instead of `id`: the CLI names that kernel when it learns of it.
struct NvptxProbeIdRule {
  uint64_t block = 0;
  uint32_t site = 0; // UBT_GPU_SITE_ENTRY or UBT_GPU_SITE_EXIT
  bool any_kernel = false;
  uint64_t kernel_id = 0;
  uint64_t id = 0;
  bool late_kernel = false;
};

struct NvptxOptions {
  std::string cpu = "sm_70";
  std::string features = "+ptx70";
  OptLevel level = OptLevel::O2;
  // Counters and histogram buckets: one atomic per warp and address.
  bool warp_aggregate = true;
  NvptxHostInfo host;
  std::vector<NvptxProbeIdRule> probe_ids;
  LiftOptions lift;
};

struct NvptxFunction {
  std::string name;
  bool takes_context = false;
  // Kernel parameters the probe reads (bit i: arg i), for the injector's
  // arg_mask; 0 when it reads none.
  uint64_t arg_mask = 0;
};

struct NvptxModule {
  std::string ptx;
  std::vector<NvptxFunction> functions; // in probe order
  uint32_t map_table_entries = 0;       // UBT_GPU_MAP_TABLE's length
};

// `object_maps` describes the maps the programs index (the BPF object's, in
// its order); each layout's `index` is its slot in the map table, whose
// length is `table_entries`.
Result<NvptxModule>
compile_nvptx(std::span<const NvptxProbe> probes,
              std::span<const runtime::gpu::DeviceMapLayout> object_maps,
              uint32_t table_entries, const NvptxOptions &options = {});

// The helpers GPU programs may call, for the verifier: the kernel helpers
// the device runtime implements plus ubtrace's GPU helpers.
const vm::HelperTable &gpu_helper_protos();

// The probe context as the verifier sees it: the header and up to
// kGpuMaxArgs kernel parameters.
inline constexpr uint32_t kGpuMaxArgs = 32;
vm::ContextInfo gpu_context_info();

} // namespace ubtrace::jit
