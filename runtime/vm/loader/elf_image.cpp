#include "runtime/vm/loader/elf_image.h"

#include <cstring>
#include <gelf.h>
#include <libelf.h>
#include <memory>

namespace ubtrace::vm::loader {
namespace {

struct ElfCloser {
  void operator()(Elf *elf) const { elf_end(elf); }
};

std::string elf_problem(const char *what) {
  return std::string("invalid ELF object: ") + what + ": " + elf_errmsg(-1);
}

Result<void> read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr &shdr,
                          std::vector<ElfSymbol> &out) {
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (!data)
    return make_error(elf_problem("cannot read .symtab"));
  size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym))
      return make_error(elf_problem("cannot read a symbol"));
    const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    out.push_back(ElfSymbol{name ? name : "", sym.st_value, sym.st_size,
                            static_cast<uint8_t>(GELF_ST_TYPE(sym.st_info)),
                            static_cast<uint8_t>(GELF_ST_BIND(sym.st_info)),
                            sym.st_shndx});
  }
  return {};
}

Result<std::vector<ElfReloc>> read_relocs(Elf_Scn *scn, const GElf_Shdr &shdr) {
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (!data)
    return make_error(elf_problem("cannot read a relocation section"));
  size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
  std::vector<ElfReloc> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Rel rel;
    if (!gelf_getrel(data, static_cast<int>(i), &rel))
      return make_error(elf_problem("cannot read a relocation"));
    out.push_back(ElfReloc{rel.r_offset,
                           static_cast<uint32_t>(GELF_R_SYM(rel.r_info)),
                           static_cast<uint32_t>(GELF_R_TYPE(rel.r_info))});
  }
  return out;
}

} // namespace

Result<ElfImage> ElfImage::read(std::span<const uint8_t> bytes) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    return make_error("libelf is too old");
  // libelf wants a mutable buffer; keep a private copy alive while reading.
  std::vector<char> copy(bytes.begin(), bytes.end());
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(copy.data(), copy.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    return make_error("not an ELF object");
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf.get(), &ehdr))
    return make_error(elf_problem("no ELF header"));
  if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_BPF)
    return make_error("not a 64-bit BPF ELF object (e_machine is " +
                      std::to_string(ehdr.e_machine) + ", want EM_BPF)");
  if (ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
    return make_error("big-endian BPF objects are not supported");
  uint64_t headers_end =
      ehdr.e_shoff + uint64_t(ehdr.e_shnum) * ehdr.e_shentsize;
  if (ehdr.e_shnum == 0 || headers_end > bytes.size())
    return make_error("truncated ELF object: section headers end at byte " +
                      std::to_string(headers_end) + ", the object has " +
                      std::to_string(bytes.size()));
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf.get(), &shstrndx) != 0)
    return make_error(elf_problem("no section name table"));

  ElfImage image;
  size_t section_count = 0;
  if (elf_getshdrnum(elf.get(), &section_count) != 0)
    return make_error(elf_problem("cannot count sections"));
  image.sections_.resize(section_count);
  image.relocs_.resize(section_count);
  for (Elf_Scn *scn = elf_nextscn(elf.get(), nullptr); scn;
       scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr))
      return make_error(elf_problem("cannot read a section header"));
    size_t index = elf_ndxscn(scn);
    if (shdr.sh_type != SHT_NOBITS &&
        shdr.sh_offset + shdr.sh_size > bytes.size())
      return make_error("truncated ELF object: section " +
                        std::to_string(index) + " ends past byte " +
                        std::to_string(bytes.size()));
    const char *name = elf_strptr(elf.get(), shstrndx, shdr.sh_name);
    ElfSection &section = image.sections_[index];
    section.index = static_cast<uint32_t>(index);
    section.name = name ? name : "";
    section.type = shdr.sh_type;
    section.flags = shdr.sh_flags;
    section.size = shdr.sh_size;
    section.link = shdr.sh_link;
    section.info = shdr.sh_info;
    if (shdr.sh_type == SHT_SYMTAB) {
      if (auto r = read_symbols(elf.get(), scn, shdr, image.symbols_); !r)
        return std::move(r).take_error();
    } else if (shdr.sh_type == SHT_REL) {
      if (shdr.sh_info >= section_count)
        return make_error("relocation section " + section.name +
                          " applies to a section that does not exist");
      auto relocs = read_relocs(scn, shdr);
      if (!relocs)
        return std::move(relocs).take_error();
      image.relocs_[shdr.sh_info] = std::move(*relocs);
    } else if (shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0) {
      Elf_Data *data = elf_getdata(scn, nullptr);
      if (!data || data->d_size != shdr.sh_size)
        return make_error(
            elf_problem(("cannot read section " + section.name).c_str()));
      const auto *p = static_cast<const uint8_t *>(data->d_buf);
      section.bytes.assign(p, p + data->d_size);
    }
  }
  return image;
}

const std::vector<ElfReloc> &ElfImage::relocations_for(uint32_t index) const {
  static const std::vector<ElfReloc> none;
  return index < relocs_.size() ? relocs_[index] : none;
}

const ElfSection *ElfImage::find_section(std::string_view name) const {
  for (const ElfSection &section : sections_)
    if (section.name == name)
      return &section;
  return nullptr;
}

} // namespace ubtrace::vm::loader
