#include "backends/gpu/probe_ids.h"

#include "backends/gpu/gpu_program.h"
#include "runtime/gpu/gpu_helper_ids.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/probe_abi.h"
#include "runtime/symbols/library_names.h"

#include <map>
#include <set>
#include <tuple>

namespace ubtrace::backends::gpu {
namespace {

uint32_t site_of(const runtime::ProbeSpec &spec) {
  return spec.kind == runtime::ProbeKind::GpuKernelEntry ? UBT_GPU_SITE_ENTRY
                                                         : UBT_GPU_SITE_EXIT;
}

// BIN (resolved) against the file a known kernel came from: a path or glob,
// or a library by name (`kernel:libfoo.so:*`), as the agent compares them.
bool binary_matches(const std::string &binary, const std::string &file) {
  return runtime::gpu::glob_match(binary, file) ||
         (runtime::symbols::looks_like_library(binary) &&
          runtime::symbols::library_name_matches(binary, file));
}

// The known kernels `spec` (BIN resolved to `binary`) attaches to, one per
// mangled name, in the order they were found.
std::vector<const KnownKernel *> matches(const runtime::ProbeSpec &spec,
                                         const std::string &binary,
                                         const KnownKernels &kernels) {
  std::vector<const KnownKernel *> out;
  std::map<std::string, bool> seen;
  const bool any_module = binary.empty() || binary == "*";
  for (const KnownKernel &k : kernels.kernels()) {
    if (!any_module && !binary_matches(binary, k.binary))
      continue;
    if (!runtime::gpu::kernel_matches(spec.function,
                                      runtime::gpu::kernel_names(k.mangled)))
      continue;
    if (seen.emplace(k.mangled, true).second)
      out.push_back(&k);
  }
  return out;
}

} // namespace

GpuProbeIds plan_probe_ids(const runtime::Bundle &bundle,
                           std::span<const std::string> binaries,
                           const KnownKernels *kernels, uint64_t first_new_id) {
  GpuProbeIds out;
  // A block's attach points are consecutive in bundle.probes and share the
  // block's program (section); codegen passes the first one's index.
  std::map<std::string, uint64_t> block_of; // section -> first index
  // The id a block's site gets for a kernel no exact rule names: its
  // first attach point with that site.
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> fallback;
  // Sites of a block with a wildcard or several attach points: a kernel the
  // CLI does not know may be any of them, named per kernel, so it gets a
  // late id the CLI names when the agent reports the kernel.
  std::map<std::pair<uint64_t, uint32_t>, bool> ambiguous;
  std::vector<std::pair<uint64_t, uint32_t>> order;
  for (size_t i = 0; i < bundle.probes.size(); ++i) {
    const runtime::ProbeSpec &spec = bundle.probes[i];
    if (!is_gpu_probe(spec))
      continue;
    uint64_t block = block_of.emplace(spec.section, i).first->second;
    auto key = std::make_pair(block, site_of(spec));
    if (fallback.emplace(key, i).second) {
      order.push_back(key);
      ambiguous[key] = false;
    } else {
      ambiguous[key] = true;
    }
    if (spec.function.find('*') != std::string::npos)
      ambiguous[key] = true;
  }
  const bool late = kernels && first_new_id != 0;
  for (const auto &key : order)
    out.rules.push_back({key.first, key.second, true, 0, fallback.at(key),
                         late && ambiguous.at(key)});
  if (!kernels)
    return out;

  std::map<std::string, uint64_t> new_ids; // expanded name -> id
  // A kernel two attach points of one block and site match gets the
  // first one's id (the device cannot tell which of them fired).
  std::set<std::tuple<uint64_t, uint32_t, uint64_t>> decided;
  for (size_t i = 0; i < bundle.probes.size(); ++i) {
    const runtime::ProbeSpec &spec = bundle.probes[i];
    if (!is_gpu_probe(spec))
      continue;
    const std::string &binary = i < binaries.size() ? binaries[i] : spec.target;
    uint64_t block = block_of.at(spec.section);
    uint32_t site = site_of(spec);
    uint64_t fallback_id = fallback.at({block, site});
    std::vector<const KnownKernel *> found = matches(spec, binary, *kernels);
    const bool expand =
        first_new_id != 0 &&
        (spec.function.find('*') != std::string::npos || found.size() > 1);
    for (const KnownKernel *k : found) {
      if (!decided.emplace(block, site, k->id).second)
        continue;
      uint64_t id = i;
      if (expand) {
        std::string name =
            (site == UBT_GPU_SITE_ENTRY ? "kernel:" : "kernelret:") + binary +
            ":" + k->mangled;
        auto [it, fresh] =
            new_ids.emplace(name, first_new_id + out.new_names.size());
        if (fresh)
          out.new_names.push_back(name);
        id = it->second;
      }
      // The fallback already gives this kernel the right id, unless it
      // is a late one.
      if (id != fallback_id || (late && ambiguous.at({block, site})))
        out.rules.push_back({block, site, false, k->id, id});
    }
  }
  return out;
}

std::string late_probe_name(std::span<const runtime::ProbeSpec> probes,
                            std::span<const std::string> binaries,
                            uint64_t late_id, const std::string &mangled) {
  const uint64_t block = runtime::gpu::late_probe_block(late_id);
  const uint32_t site = runtime::gpu::late_probe_site(late_id);
  if (block >= probes.size())
    return "";
  const std::string &section = probes[block].section;
  const runtime::gpu::KernelNames names = runtime::gpu::kernel_names(mangled);
  for (size_t i = block; i < probes.size(); ++i) {
    const runtime::ProbeSpec &spec = probes[i];
    if (spec.section != section)
      break;
    if (!is_gpu_probe(spec) || site_of(spec) != site ||
        !runtime::gpu::kernel_matches(spec.function, names))
      continue;
    if (spec.function.find('*') == std::string::npos)
      return spec.name;
    const std::string &binary = i < binaries.size() ? binaries[i] : spec.target;
    return (site == UBT_GPU_SITE_ENTRY ? "kernel:" : "kernelret:") + binary +
           ":" + mangled;
  }
  return "";
}

} // namespace ubtrace::backends::gpu
