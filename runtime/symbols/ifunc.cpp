#include "runtime/symbols/ifunc.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <link.h>

namespace ubtrace::runtime::symbols {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The process's GLIBC_TUNABLES ("" when unset), or nullopt when its
// environment cannot be read.
std::optional<std::string> tunables_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ",
                   std::ios::binary);
  if (!in)
    return std::nullopt;
  std::string entry;
  const std::string key = "GLIBC_TUNABLES=";
  while (std::getline(in, entry, '\0'))
    if (entry.rfind(key, 0) == 0)
      return entry.substr(key.size());
  return std::string();
}

// 1. The process's own answer, from a GOT slot of the IFUNC.
std::optional<uint64_t> from_process(const BinaryInfo &binary,
                                     uint64_t resolver,
                                     const AddressSpace &space,
                                     const ReadU64 &read) {
  auto bias = space.load_bias(binary.path(), binary.elf());
  if (!bias)
    return std::nullopt;
  for (uint64_t slot : irelative_slots(binary.elf(), resolver)) {
    auto value = read(*bias + slot);
    if (!value || *value < *bias)
      continue;
    uint64_t vaddr = *value - *bias;
    const LoadSegment *seg = binary.elf().segment_of(vaddr);
    if (seg && seg->executable)
      return vaddr;
  }
  return std::nullopt;
}

// 2. The CLI's answer, for the same file loaded here. `names`: the symbol
// and its aliases (debug names such as __GI_strlen are not exported).
Result<uint64_t> from_this_process(const BinaryInfo &binary,
                                   const std::vector<std::string> &names,
                                   pid_t pid) {
  void *handle = dlopen(binary.path().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle)
    return make_error("ubtrace has no copy of " + binary.path() +
                      " loaded to ask");
  struct Close {
    void *h;
    ~Close() { dlclose(h); }
  } close{handle};
  struct link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
    return make_error("ubtrace cannot tell where it has " + binary.path());
  auto loaded = identify_file(map->l_name);
  const FileIdentity &want = binary.identity();
  if (!loaded ||
      !loaded->same_inode(want.dev_major, want.dev_minor, want.inode))
    return make_error("ubtrace's copy of " + binary.path() +
                      " is another file");
  auto tunables = tunables_of(pid);
  const char *ours = std::getenv("GLIBC_TUNABLES");
  if (!tunables || *tunables != (ours ? ours : ""))
    return make_error(
        "the process's GLIBC_TUNABLES (which choose implementations) "
        "differ from ubtrace's or cannot be read");
  for (const std::string &name : names) {
    // "memcpy@@GLIBC_2.14" names one version of several.
    std::string base = name.substr(0, name.find('@'));
    size_t at = name.find_last_of('@');
    void *impl = at == std::string::npos ? dlsym(handle, base.c_str())
                                         : dlvsym(handle, base.c_str(),
                                                  name.substr(at + 1).c_str());
    if (!impl)
      continue;
    uint64_t vaddr = reinterpret_cast<uint64_t>(impl) - map->l_addr;
    const LoadSegment *seg = binary.elf().segment_of(vaddr);
    if (!seg || !seg->executable)
      return make_error("it resolves to code outside " + binary.path() +
                        " (the vDSO?)");
    return vaddr;
  }
  return make_error("it is not exported");
}

} // namespace

std::vector<uint64_t> irelative_slots(const ElfFile &file, uint64_t resolver) {
  std::vector<uint64_t> out;
  if (!file.is_64bit() || file.machine() != EM_X86_64)
    return out;
  for (const Section &s : file.sections()) {
    if (s.type != SHT_RELA)
      continue;
    auto bytes = file.section_bytes(s);
    if (!bytes)
      continue;
    for (size_t off = 0; off + sizeof(Elf64_Rela) <= bytes->size();
         off += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      std::memcpy(&r, bytes->data() + off, sizeof r);
      if (ELF64_R_TYPE(r.r_info) == R_X86_64_IRELATIVE &&
          static_cast<uint64_t>(r.r_addend) == resolver)
        out.push_back(r.r_offset);
    }
  }
  return out;
}

Result<uint64_t> ifunc_implementation(const BinaryInfo &binary,
                                      const std::vector<std::string> &names,
                                      uint64_t resolver,
                                      const AddressSpace &space,
                                      const ReadU64 &read) {
  if (auto vaddr = from_process(binary, resolver, space, read))
    return *vaddr;
  auto here = from_this_process(binary, names, space.pid());
  if (!here)
    return make_error("no GOT slot of the process holds it, and " +
                      here.error());
  return *here;
}

Result<ResolvedProbe> at_implementation(const BinaryInfo &binary,
                                        ResolvedProbe probe,
                                        uint64_t implementation) {
  auto file_offset = binary.elf().vaddr_to_offset(implementation);
  if (!file_offset)
    return make_error(binary.path() + ":" + hex(implementation) +
                      " is not stored in the file");
  const ElfSymbol *sym = binary.symbols().function_at(implementation);
  bool starts = sym && sym->vaddr == implementation;
  probe.vaddr = implementation;
  probe.file_offset = *file_offset;
  probe.function_vaddr = implementation;
  probe.function_size = starts ? sym->size : 0;
  probe.offset = 0;
  probe.ifunc = false;
  return probe;
}

} // namespace ubtrace::runtime::symbols
