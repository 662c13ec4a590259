// `probe` in GPU probes: which attach point of a probe block fired. The
// device knows only its site (entry or exit) and the kernel's id, so the
// CLI gives the NVPTX target a table (jit::NvptxProbeIdRule) that maps
// (block, site, kernel id) to a probe id, folded per block into a few
// compares at each use.
//
// Names, as bpftrace names the probes of an attach point it expands:
//   - an attach point whose NAME has a wildcard, or that matches several
//     known kernels (overloads by their demangled name), names each kernel
//     it matches by its full name: "kernel:BIN:MANGLED" or
//     "kernelret:BIN:MANGLED", BIN as the agent compares it (the resolved
//     path; empty for kernel::, any module), MANGLED the kernel's name in
//     its PTX (as `ubtrace -l 'kernel:BIN:*'` lists it, and as bpftrace
//     names a C++ function a uprobe wildcard matched);
//   - any other attach point is named as written;
//   - a kernel the CLI did not know when it compiled (a module the program
//     builds or loads from a file no probe names) gets, where its block's
//     site has a wildcard or several attach points, a late id
//     (runtime::gpu::late_probe_id): the CLI names it by the same rules
//     once the agent reports the kernel (late_probe_name); elsewhere, the
//     block's only attach point with that site, as written.
// Expanded names get new probe ids from `first_new_id` on; the session
// appends them to its probe names so they print.
#pragma once

#include "backends/gpu/kernel_names.h"
#include "runtime/bundle.h"
#include "runtime/jit/nvptx_target.h"

#include <span>
#include <string>
#include <vector>

namespace ubtrace::backends::gpu {

struct GpuProbeIds {
  std::vector<jit::NvptxProbeIdRule> rules;
  std::vector<std::string> new_names; // ids first_new_id, first_new_id+1...
};

// `binaries[i]`: bundle.probes[i]'s BIN resolved (only GPU probes' are
// read). With no `kernels`, or `first_new_id` 0, nothing expands: every
// attach point keeps its own id, told apart by site where a block has
// both kernel: and kernelret: ones.
GpuProbeIds plan_probe_ids(const runtime::Bundle &bundle,
                           std::span<const std::string> binaries,
                           const KnownKernels *kernels, uint64_t first_new_id);

// The name of a late probe id for the kernel `mangled`: the first attach
// point of the id's block and site whose NAME matches the kernel, expanded
// ("kernel:BIN:MANGLED") when it has a wildcard, else as written; "" when
// none matches.
std::string late_probe_name(std::span<const runtime::ProbeSpec> probes,
                            std::span<const std::string> binaries,
                            uint64_t late_id, const std::string &mangled);

} // namespace ubtrace::backends::gpu
