// Reads the sections, symbols and RELA relocations of an x86-64 ELF64
// relocatable object, checking every offset against the buffer.
#include "runtime/jit/elf_link.h"

#include <cstring>
#include <elf.h>

namespace ubtrace::jit::elf {
namespace {

template <class T>
bool read_at(std::span<const uint8_t> bytes, uint64_t offset, T &out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

bool slice(std::span<const uint8_t> bytes, uint64_t offset, uint64_t size,
           std::span<const uint8_t> &out) {
  if (offset > bytes.size() || bytes.size() - offset < size)
    return false;
  out = bytes.subspan(offset, size);
  return true;
}

// The NUL-terminated string at `offset` of a string table.
std::string string_at(std::span<const uint8_t> table, uint64_t offset) {
  if (offset >= table.size())
    return {};
  const char *begin = reinterpret_cast<const char *>(table.data()) + offset;
  return std::string(begin, strnlen(begin, table.size() - offset));
}

} // namespace

Result<Relocatable> parse(std::span<const uint8_t> bytes) {
  Elf64_Ehdr eh;
  if (!read_at(bytes, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return make_error("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_REL ||
      eh.e_machine != EM_X86_64)
    return make_error("not an x86-64 ELF64 relocatable object");
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shstrndx >= eh.e_shnum)
    return make_error("malformed ELF section header table");

  std::vector<Elf64_Shdr> headers(eh.e_shnum);
  for (uint32_t i = 0; i < eh.e_shnum; ++i)
    if (!read_at(bytes, eh.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr),
                 headers[i]))
      return make_error("ELF section header " + std::to_string(i) +
                        " is outside the file");
  auto contents = [&](uint32_t index,
                      std::span<const uint8_t> &out) -> Result<void> {
    const Elf64_Shdr &sh = headers[index];
    if (sh.sh_type == SHT_NOBITS) {
      out = {};
      return {};
    }
    if (!slice(bytes, sh.sh_offset, sh.sh_size, out))
      return make_error("ELF section " + std::to_string(index) +
                        " is outside the file");
    return {};
  };

  std::span<const uint8_t> names;
  if (auto ok = contents(eh.e_shstrndx, names); !ok)
    return std::move(ok).take_error();
  Relocatable out;
  for (uint32_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr &sh = headers[i];
    Section s;
    s.name = string_at(names, sh.sh_name);
    s.type = sh.sh_type;
    s.flags = sh.sh_flags;
    s.size = sh.sh_size;
    s.align = sh.sh_addralign ? sh.sh_addralign : 1;
    if ((s.align & (s.align - 1)) != 0)
      return make_error("ELF section " + s.name + " has alignment " +
                        std::to_string(s.align));
    if (auto ok = contents(i, s.data); !ok)
      return std::move(ok).take_error();
    out.sections.push_back(std::move(s));
  }

  for (uint32_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr &sh = headers[i];
    if (sh.sh_type != SHT_SYMTAB)
      continue;
    if (!out.symbols.empty())
      return make_error("ELF object with two symbol tables");
    if (sh.sh_link >= eh.e_shnum || sh.sh_entsize != sizeof(Elf64_Sym))
      return make_error("malformed ELF symbol table");
    std::span<const uint8_t> strings = out.sections[sh.sh_link].data;
    std::span<const uint8_t> table = out.sections[i].data;
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= table.size();
         off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      read_at(table, off, sym);
      out.symbols.push_back(
          {string_at(strings, sym.st_name), uint8_t(ELF64_ST_TYPE(sym.st_info)),
           uint8_t(ELF64_ST_BIND(sym.st_info)), sym.st_shndx, sym.st_value});
    }
  }

  for (uint32_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr &sh = headers[i];
    if (sh.sh_type == SHT_REL)
      return make_error(
          "ELF object with SHT_REL relocations (x86-64 uses RELA)");
    if (sh.sh_type != SHT_RELA)
      continue;
    if (sh.sh_info >= eh.e_shnum || sh.sh_entsize != sizeof(Elf64_Rela))
      return make_error("malformed ELF relocation section " +
                        out.sections[i].name);
    std::span<const uint8_t> table = out.sections[i].data;
    for (uint64_t off = 0; off + sizeof(Elf64_Rela) <= table.size();
         off += sizeof(Elf64_Rela)) {
      Elf64_Rela rela;
      read_at(table, off, rela);
      uint32_t symbol = uint32_t(ELF64_R_SYM(rela.r_info));
      if (symbol >= out.symbols.size())
        return make_error("ELF relocation of an unknown symbol " +
                          std::to_string(symbol));
      out.relocs.push_back({sh.sh_info, rela.r_offset,
                            uint32_t(ELF64_R_TYPE(rela.r_info)), symbol,
                            rela.r_addend});
    }
  }
  return out;
}

} // namespace ubtrace::jit::elf
