// The GPU probes of a bundle compiled for the agent: the probe PTX (every
// GPU probe's program lifted to NVPTX, runtime/jit/nvptx_target.h), where
// each probe attaches, and the device layout of every map. This is what
// the GPU backend sends to the agent (gpu_wire.h); tests compile scripts
// with it and inject the result into real applications offline.
#pragma once

#include "backends/gpu/kernel_names.h"
#include "runtime/bundle.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/gpu/ptx_inject.h"
#include "runtime/jit/nvptx_target.h"
#include "runtime/result.h"

#include <functional>
#include <string>
#include <vector>

namespace ubtrace::backends::gpu {

struct GpuAttachment {
  runtime::gpu::ProbeAttachment attachment;
  std::string binary; // BIN of kernel:BIN:NAME resolved; empty: any module
  size_t probe = 0;   // index in bundle.probes
};

struct GpuProgram {
  std::string ptx; // map table still zero: the agent bakes its addresses
  std::vector<GpuAttachment> attachments;
  std::vector<runtime::gpu::DeviceMapLayout> maps; // one per bundle map
  uint32_t map_table_entries = 0;
  bool sends_events = false; // some probe writes the events ring (printf)
  // Some probe reads the kernel id (`func` or `probe`).
  bool reads_kernel_id = false;
  // Names of the probe ids from GpuCompileOptions::first_new_probe_id on:
  // attach points expanded per kernel (probe_ids.h).
  std::vector<std::string> probe_names;
  // Each bundle probe's BIN resolved (resolve_binary); "" for others.
  std::vector<std::string> binaries;
};

struct GpuCompileOptions {
  jit::NvptxOptions nvptx;
  runtime::gpu::DevicePlanOptions plan;
  // The kernels `probe` can name (probe_ids.h), asked for only when a
  // probe reads `probe` or `func`. Unset, or null: none known.
  std::function<const KnownKernels *()> kernels;
  // The id the first expanded attach point name gets; 0: nothing expands.
  uint64_t first_new_probe_id = 0;
};

bool is_gpu_probe(const runtime::ProbeSpec &probe);
bool has_gpu_probes(const runtime::Bundle &bundle);

// Verifies every GPU probe's program against the GPU helpers and context,
// then compiles them all into one probe module. Errors name the probe.
Result<GpuProgram> compile_gpu_program(const runtime::Bundle &bundle,
                                       const GpuCompileOptions &options = {});

// kernel:BIN:NAME's BIN as the agent compares it: an absolute path
// (realpath, or looked up on PATH); "" and "*" stay as they are.
std::string resolve_binary(const std::string &bin);

// The probe program the agent's rewriter takes (no BIN filtering).
runtime::gpu::ProbeProgram probe_program(const GpuProgram &program);

} // namespace ubtrace::backends::gpu
