// ubtrace -l 'kernel:BIN:PATTERN': the CUDA kernels in a binary's fatbins.
#include "backends/kernel_listing.h"

#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/ptx_module.h"
#include "runtime/symbols/binary_resolver.h"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <set>

namespace ubtrace::cli {
namespace {

// Kernels of a cubin (SASS): function symbols marked as entries
// (STO_CUDA_ENTRY in st_other), read straight from the ELF bytes.
void cubin_kernels(const std::vector<uint8_t> &cubin,
                   std::set<std::string> &out) {
  constexpr unsigned char kCudaEntry = 0x10;
  if (cubin.size() < sizeof(Elf64_Ehdr))
    return;
  Elf64_Ehdr eh;
  std::memcpy(&eh, cubin.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > cubin.size())
    return;
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, cubin.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  for (size_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum ||
        sh.sh_entsize != sizeof(Elf64_Sym) ||
        sh.sh_offset + sh.sh_size > cubin.size())
      continue;
    Elf64_Shdr strtab = section(sh.sh_link);
    if (strtab.sh_offset + strtab.sh_size > cubin.size())
      continue;
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size;
         off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, cubin.data() + sh.sh_offset + off, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC ||
          !(sym.st_other & kCudaEntry) || sym.st_name >= strtab.sh_size)
        continue;
      const char *name = reinterpret_cast<const char *>(
          cubin.data() + strtab.sh_offset + sym.st_name);
      size_t len = strnlen(name, strtab.sh_size - sym.st_name);
      out.insert(std::string(name, len));
    }
  }
}

} // namespace

Result<std::vector<std::string>> list_kernels(const std::string &type,
                                              const std::string &binary,
                                              const std::string &pattern) {
  auto files = runtime::symbols::resolve_binary(binary);
  if (!files)
    return make_error(files.error());
  const std::string path = files->front().path;
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof())
    return make_error("cannot read " + path);
  auto found = runtime::gpu::find_elf_fatbins(
      runtime::gpu::Bytes(bytes.data(), bytes.size()));
  if (!found)
    return make_error(path + ": " + found.error());
  if (found->fatbins.empty())
    return make_error(path + ": no CUDA fatbin (no GPU code in this file)");
  std::set<std::string> kernels;
  for (const auto &f : found->fatbins)
    for (const auto &entry : f.fatbin.entries) {
      if (entry.kind == runtime::gpu::EntryKind::Ptx) {
        auto text = runtime::gpu::entry_ptx(entry);
        if (!text)
          continue;
        auto module = runtime::gpu::parse_ptx(*text);
        if (!module)
          continue;
        for (const auto &fn : module->functions)
          if (fn.is_entry)
            kernels.insert(std::string(fn.name));
      } else if (entry.kind == runtime::gpu::EntryKind::Cubin) {
        auto contents = runtime::gpu::entry_contents(entry);
        if (contents)
          cubin_kernels(*contents, kernels);
      }
    }
  std::vector<std::string> out;
  const std::string pat = pattern.empty() ? "*" : pattern;
  for (const auto &k : kernels)
    if (runtime::gpu::kernel_matches(pat, runtime::gpu::kernel_names(k)))
      out.push_back(type + ":" + path + ":" + k);
  return out;
}

} // namespace ubtrace::cli
