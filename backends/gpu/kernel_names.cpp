#include "backends/gpu/kernel_names.h"

#include "runtime/file_text.h"
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/ptx_module.h"

#include <fstream>
#include <iterator>

namespace ubtrace::backends::gpu {

bool KnownKernels::add(const std::string &binary, const std::string &mangled) {
  if (!seen_.emplace(binary, mangled).second)
    return false;
  kernels_.push_back({binary, mangled, runtime::gpu::fnv1a64(mangled)});
  return true;
}

Result<size_t> KnownKernels::add_binary(const std::string &path) {
  if (!files_.insert(path).second)
    return size_t{0};
  auto bytes = read_file(path);
  if (!bytes)
    return make_error(bytes.error());
  auto found = runtime::gpu::find_elf_fatbins(
      runtime::gpu::as_bytes(bytes->data(), bytes->size()));
  if (!found)
    return make_error(path + ": " + found.error());
  std::set<std::string> names; // sorted; PTX of several architectures once
  for (const runtime::gpu::ElfFatbin &f : found->fatbins)
    for (const runtime::gpu::FatbinEntry &entry : f.fatbin.entries) {
      if (entry.kind != runtime::gpu::EntryKind::Ptx)
        continue;
      auto text = runtime::gpu::entry_ptx(entry);
      if (!text)
        continue; // the agent cannot instrument it either
      auto module = runtime::gpu::parse_ptx(*text);
      if (!module)
        continue;
      for (const runtime::gpu::PtxFunction &fn : module->functions)
        if (fn.is_entry)
          names.insert(std::string(fn.name));
    }
  size_t added = 0;
  for (const std::string &name : names)
    added += add(path, name) ? 1 : 0;
  return added;
}

std::map<uint64_t, std::string>
KnownKernels::printed_names(bool demangle) const {
  std::map<uint64_t, std::string> out;
  for (const KnownKernel &k : kernels_)
    out.emplace(k.id, demangle ? runtime::gpu::kernel_names(k.mangled).signature
                               : k.mangled);
  return out;
}

} // namespace ubtrace::backends::gpu
