#include "runtime/gpu/elf_fatbins.h"

#include "runtime/gpu/fatbin_format.h"

#include <cstddef>
#include <elf.h>
#include <optional>

namespace ubtrace::runtime::gpu {
namespace {

// Just enough of ELF64 to find sections, map addresses and read RELA.
class ElfFile {
public:
  static Result<ElfFile> open(Bytes file) {
    if (file.size() < sizeof(Elf64_Ehdr) ||
        std::memcmp(file.data(), ELFMAG, SELFMAG) != 0)
      return make_error("not an ELF file");
    if (file[EI_CLASS] != ELFCLASS64 || file[EI_DATA] != ELFDATA2LSB)
      return make_error("only little-endian ELF64 host files are supported");
    ElfFile elf;
    elf.file_ = file;
    elf.header_ = load_le<Elf64_Ehdr>(file.data());
    const Elf64_Ehdr &h = elf.header_;
    if (h.e_shnum == 0)
      return elf; // no section headers: nothing to find
    if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shoff > file.size() ||
        (file.size() - h.e_shoff) / sizeof(Elf64_Shdr) < h.e_shnum)
      return make_error("ELF section headers run past the end of the file");
    for (size_t i = 0; i < h.e_shnum; ++i)
      elf.sections_.push_back(load_le<Elf64_Shdr>(file.data() + h.e_shoff +
                                                  i * sizeof(Elf64_Shdr)));
    if (h.e_shstrndx >= elf.sections_.size())
      return make_error("ELF section name table index out of range");
    return elf;
  }

  uint16_t type() const { return header_.e_type; }
  size_t section_count() const { return sections_.size(); }
  const Elf64_Shdr &section(size_t i) const { return sections_[i]; }

  std::string_view section_name(size_t i) const {
    const Elf64_Shdr &names = sections_[header_.e_shstrndx];
    uint64_t at = names.sh_offset + sections_[i].sh_name;
    if (names.sh_type == SHT_NOBITS || at >= file_.size())
      return {};
    const char *start = reinterpret_cast<const char *>(file_.data()) + at;
    return std::string_view(start, strnlen(start, file_.size() - at));
  }

  std::optional<size_t> find_section(std::string_view name) const {
    for (size_t i = 0; i < sections_.size(); ++i)
      if (section_name(i) == name)
        return i;
    return std::nullopt;
  }

  // The file bytes of a section; empty for NOBITS or out-of-range sections.
  Bytes contents(size_t i) const {
    const Elf64_Shdr &s = sections_[i];
    if (s.sh_type == SHT_NOBITS || s.sh_offset > file_.size() ||
        file_.size() - s.sh_offset < s.sh_size)
      return {};
    return file_.subspan(s.sh_offset, s.sh_size);
  }

  // The file offset that holds virtual address `vaddr` (loaded files).
  std::optional<uint64_t> file_offset_of(uint64_t vaddr) const {
    for (const Elf64_Shdr &s : sections_) {
      if (!(s.sh_flags & SHF_ALLOC) || s.sh_type == SHT_NOBITS)
        continue;
      if (vaddr >= s.sh_addr && vaddr - s.sh_addr < s.sh_size)
        return s.sh_offset + (vaddr - s.sh_addr);
    }
    return std::nullopt;
  }

  // Calls fn(section index of the RELA table, entry) for every RELA entry.
  template <class Fn> void for_each_rela(Fn fn) const {
    for (size_t i = 0; i < sections_.size(); ++i) {
      if (sections_[i].sh_type != SHT_RELA ||
          sections_[i].sh_entsize != sizeof(Elf64_Rela))
        continue;
      Bytes table = contents(i);
      for (size_t at = 0; at + sizeof(Elf64_Rela) <= table.size();
           at += sizeof(Elf64_Rela))
        fn(i, load_le<Elf64_Rela>(table.data() + at));
    }
  }

  std::optional<Elf64_Sym> symbol(size_t symtab_section, uint32_t index) const {
    Bytes table = contents(symtab_section);
    if ((table.size() / sizeof(Elf64_Sym)) <= index)
      return std::nullopt;
    return load_le<Elf64_Sym>(table.data() + index * sizeof(Elf64_Sym));
  }

private:
  Bytes file_;
  Elf64_Ehdr header_{};
  std::vector<Elf64_Shdr> sections_;
};

bool is_relative_reloc(uint32_t type) {
  return type == R_X86_64_RELATIVE || type == R_AARCH64_RELATIVE;
}

// Where the data pointer of the wrapper at byte `slot` of the wrapper
// section points, as a file offset (the pointer is the field at slot + 8).
// Loaded files keep the address in place and/or in a RELATIVE relocation's
// addend; relocatable objects have a relocation against a section symbol.
std::optional<uint64_t> wrapper_target(const ElfFile &elf, size_t segment,
                                       uint64_t slot, uint64_t raw) {
  const Elf64_Shdr &seg = elf.section(segment);
  uint64_t field = slot + offsetof(FatbinWrapper, data);
  std::optional<uint64_t> out;
  if (elf.type() == ET_REL) {
    elf.for_each_rela([&](size_t table, const Elf64_Rela &r) {
      if (out || elf.section(table).sh_info != segment || r.r_offset != field)
        return;
      auto sym = elf.symbol(elf.section(table).sh_link,
                            static_cast<uint32_t>(ELF64_R_SYM(r.r_info)));
      if (!sym || sym->st_shndx == SHN_UNDEF ||
          sym->st_shndx >= elf.section_count())
        return;
      out = elf.section(sym->st_shndx).sh_offset + sym->st_value + r.r_addend;
    });
    return out;
  }
  uint64_t address = raw;
  uint64_t field_vaddr = seg.sh_addr + field;
  elf.for_each_rela([&](size_t, const Elf64_Rela &r) {
    if (r.r_offset == field_vaddr &&
        is_relative_reloc(static_cast<uint32_t>(ELF64_R_TYPE(r.r_info))))
      address = static_cast<uint64_t>(r.r_addend);
  });
  return elf.file_offset_of(address);
}

Result<void> add_section_fatbins(const ElfFile &elf, size_t index,
                                 ElfFatbins &out) {
  Bytes data = elf.contents(index);
  auto fatbins = parse_fatbin_sequence(data);
  if (!fatbins)
    return make_error(std::string(elf.section_name(index)) + ": " +
                      fatbins.error());
  for (Fatbin &fatbin : *fatbins) {
    ElfFatbin found;
    found.section = std::string(elf.section_name(index));
    found.file_offset =
        elf.section(index).sh_offset +
        static_cast<uint64_t>(fatbin.bytes.data() - data.data());
    found.fatbin = std::move(fatbin);
    out.fatbins.push_back(std::move(found));
  }
  return {};
}

} // namespace

Result<ElfFatbins> find_elf_fatbins(Bytes file) {
  auto elf = ElfFile::open(file);
  if (!elf)
    return std::move(elf).take_error();
  ElfFatbins out;
  out.has_module_id_section = elf->find_section("__nv_module_id").has_value();
  for (const char *name : {".nv_fatbin", "__nv_relfatbin"}) {
    if (auto index = elf->find_section(name)) {
      auto added = add_section_fatbins(*elf, *index, out);
      if (!added)
        return std::move(added).take_error();
    }
  }

  auto segment = elf->find_section(".nvFatBinSegment");
  if (!segment)
    return out;
  Bytes wrappers = elf->contents(*segment);
  for (size_t slot = 0; slot + kFatbinWrapperSize <= wrappers.size();
       slot += kFatbinWrapperSize) {
    int32_t magic = load_le<int32_t>(wrappers.data() + slot);
    if (static_cast<uint32_t>(magic) != kFatbinWrapperMagic)
      return make_error(".nvFatBinSegment: no wrapper magic at offset " +
                        std::to_string(slot));
    int32_t version = load_le<int32_t>(wrappers.data() + slot + 4);
    uint64_t raw = load_le<uint64_t>(wrappers.data() + slot + 8);
    size_t index = out.wrapper_count++;
    auto target = wrapper_target(*elf, *segment, slot, raw);
    if (!target || *target >= file.size())
      return make_error(".nvFatBinSegment: wrapper " + std::to_string(index) +
                        " points outside the file");
    ElfFatbin *match = nullptr;
    for (ElfFatbin &f : out.fatbins)
      if (f.file_offset == *target)
        match = &f;
    if (!match) {
      // A wrapper whose fatbin is not in a section we scanned.
      auto fatbin = parse_fatbin(file.subspan(*target));
      if (!fatbin)
        return make_error(".nvFatBinSegment: wrapper " + std::to_string(index) +
                          ": " + fatbin.error());
      ElfFatbin found;
      found.file_offset = *target;
      found.fatbin = std::move(*fatbin);
      out.fatbins.push_back(std::move(found));
      match = &out.fatbins.back();
    }
    match->wrapper_index = static_cast<int>(index);
    match->wrapper_version = version;
  }
  return out;
}

} // namespace ubtrace::runtime::gpu
