#include "runtime/inject/elf_dynsym.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

constexpr uint64_t kPageMask = ~uint64_t{0xfff};

Result<std::vector<char>> read_range(int fd, uint64_t offset, uint64_t size,
                                     const std::string &label) {
  if (size > (uint64_t{256} << 20))
    return make_error(label + ": implausible ELF section size");
  std::vector<char> bytes(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, bytes.data() + done, size - done,
                        static_cast<off_t>(offset + done));
    if (n <= 0)
      return make_error(label + ": truncated ELF file");
    done += static_cast<uint64_t>(n);
  }
  return bytes;
}

template <class T>
Result<std::vector<T>> read_table(int fd, uint64_t offset, uint64_t count,
                                  const std::string &label) {
  auto bytes = read_range(fd, offset, count * sizeof(T), label);
  if (!bytes)
    return std::move(bytes).take_error();
  std::vector<T> table(count);
  std::memcpy(table.data(), bytes->data(), bytes->size());
  return table;
}

struct Headers {
  std::vector<Elf64_Phdr> phdrs;
  std::vector<Elf64_Shdr> shdrs;
};

Result<Headers> read_headers(int fd, const std::string &label) {
  auto header = read_table<Elf64_Ehdr>(fd, 0, 1, label);
  if (!header)
    return std::move(header).take_error();
  const Elf64_Ehdr &ehdr = (*header)[0];
  if (std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 ||
      ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64)
    return make_error(label + " is not an x86-64 ELF file");
  if (ehdr.e_phentsize != sizeof(Elf64_Phdr) ||
      ehdr.e_shentsize != sizeof(Elf64_Shdr))
    return make_error(label + ": unexpected ELF header sizes");
  auto phdrs = read_table<Elf64_Phdr>(fd, ehdr.e_phoff, ehdr.e_phnum, label);
  if (!phdrs)
    return std::move(phdrs).take_error();
  auto shdrs = read_table<Elf64_Shdr>(fd, ehdr.e_shoff, ehdr.e_shnum, label);
  if (!shdrs)
    return std::move(shdrs).take_error();
  return Headers{std::move(*phdrs), std::move(*shdrs)};
}

const Elf64_Shdr *section_of(const Headers &h, uint32_t type) {
  for (const Elf64_Shdr &sh : h.shdrs)
    if (sh.sh_type == type)
      return &sh;
  return nullptr;
}

// The DT_NEEDED names of the dynamic section, in order.
Result<std::vector<std::string>> needed_of(int fd, const Headers &h,
                                           const std::string &label) {
  std::vector<std::string> needed;
  const Elf64_Shdr *dynamic = section_of(h, SHT_DYNAMIC);
  if (!dynamic || dynamic->sh_link >= h.shdrs.size())
    return needed;
  auto entries = read_table<Elf64_Dyn>(
      fd, dynamic->sh_offset, dynamic->sh_size / sizeof(Elf64_Dyn), label);
  const Elf64_Shdr &names = h.shdrs[dynamic->sh_link];
  auto text = read_range(fd, names.sh_offset, names.sh_size, label);
  if (!entries || !text)
    return make_error(label + ": unreadable dynamic section");
  for (const Elf64_Dyn &entry : *entries)
    if (entry.d_tag == DT_NEEDED && entry.d_un.d_val < text->size())
      needed.emplace_back(text->data() + entry.d_un.d_val,
                          strnlen(text->data() + entry.d_un.d_val,
                                  text->size() - entry.d_un.d_val));
  return needed;
}

} // namespace

Result<std::vector<std::string>>
ElfDynamicSymbols::read_needed(int fd, const std::string &label) {
  auto headers = read_headers(fd, label);
  if (!headers)
    return std::move(headers).take_error();
  return needed_of(fd, *headers, label);
}

Result<ElfDynamicSymbols> ElfDynamicSymbols::read(int fd,
                                                  const std::string &label) {
  auto headers = read_headers(fd, label);
  if (!headers)
    return std::move(headers).take_error();
  const std::vector<Elf64_Shdr> *shdrs = &headers->shdrs;
  ElfDynamicSymbols result;
  for (const Elf64_Phdr &ph : headers->phdrs)
    if (ph.p_type == PT_LOAD)
      result.segments_.push_back({ph.p_vaddr, ph.p_memsz, ph.p_offset,
                                  ph.p_filesz, (ph.p_flags & PF_X) != 0});
  auto needed = needed_of(fd, *headers, label);
  if (!needed)
    return std::move(needed).take_error();
  result.needed_ = std::move(*needed);
  const Elf64_Shdr *dynsym = section_of(*headers, SHT_DYNSYM);
  const Elf64_Shdr *versym = section_of(*headers, SHT_GNU_versym);
  if (!dynsym || dynsym->sh_link >= shdrs->size())
    return make_error(label + " has no dynamic symbol table");
  const Elf64_Shdr &strtab_header = (*shdrs)[dynsym->sh_link];

  uint64_t count = dynsym->sh_size / sizeof(Elf64_Sym);
  auto symbols = read_table<Elf64_Sym>(fd, dynsym->sh_offset, count, label);
  if (!symbols)
    return std::move(symbols).take_error();
  auto strings =
      read_range(fd, strtab_header.sh_offset, strtab_header.sh_size, label);
  if (!strings)
    return std::move(strings).take_error();
  std::vector<Elf64_Half> versions;
  if (versym && versym->sh_size / sizeof(Elf64_Half) == count) {
    auto table = read_table<Elf64_Half>(fd, versym->sh_offset, count, label);
    if (!table)
      return std::move(table).take_error();
    versions = std::move(*table);
  }

  for (uint64_t i = 0; i < count; ++i) {
    const Elf64_Sym &sym = (*symbols)[i];
    unsigned type = ELF64_ST_TYPE(sym.st_info);
    if (sym.st_shndx == SHN_UNDEF ||
        (type != STT_FUNC && type != STT_GNU_IFUNC))
      continue;
    if (sym.st_name >= strings->size())
      continue;
    const char *name = strings->data() + sym.st_name;
    size_t length = strnlen(name, strings->size() - sym.st_name);
    ElfFunction function;
    function.name.assign(name, length);
    function.value = sym.st_value;
    function.size = sym.st_size;
    function.ifunc = type == STT_GNU_IFUNC;
    // Bit 15 of the version index marks name@VER (hidden, non-default).
    function.default_version = versions.empty() || !(versions[i] & 0x8000);
    result.functions_.push_back(std::move(function));
  }
  std::sort(result.functions_.begin(), result.functions_.end(),
            [](const ElfFunction &a, const ElfFunction &b) {
              return a.value < b.value;
            });
  return result;
}

const ElfFunction *ElfDynamicSymbols::find(std::string_view name) const {
  const ElfFunction *found = nullptr;
  for (const ElfFunction &function : functions_) {
    if (function.name != name)
      continue;
    if (function.default_version)
      return &function;
    found = &function;
  }
  return found;
}

std::vector<std::string_view>
ElfDynamicSymbols::names_at(uint64_t vaddr) const {
  std::vector<std::string_view> names;
  auto after = std::upper_bound(
      functions_.begin(), functions_.end(), vaddr,
      [](uint64_t v, const ElfFunction &f) { return v < f.value; });
  // Walk back over every function starting at or before vaddr; sizes are
  // small, so stop once a whole page lies between.
  for (auto it = after; it != functions_.begin();) {
    --it;
    if (vaddr - it->value > (uint64_t{1} << 20))
      break;
    if (vaddr < it->value + it->size)
      names.push_back(it->name);
  }
  return names;
}

std::optional<uint64_t>
ElfDynamicSymbols::vaddr_of_mapping(uint64_t offset) const {
  for (const LoadSegment &segment : segments_)
    if ((segment.offset & kPageMask) == offset)
      return segment.vaddr & kPageMask;
  return std::nullopt;
}

} // namespace ubtrace::runtime::inject
