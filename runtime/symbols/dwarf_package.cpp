#include "runtime/symbols/dwarf_package.h"

#include <cstring>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <map>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::runtime::symbols {

namespace {

// The section a column of the index stands for (DWARF 5 ids; the GNU
// version-2 index of DWARF 4 packages differs in 2, 5 and 7).
const char *column_section(uint32_t id, uint32_t version) {
  switch (id) {
  case 1:
    return ".debug_info.dwo";
  case 2:
    return version == 2 ? ".debug_types.dwo" : nullptr;
  case 3:
    return ".debug_abbrev.dwo";
  case 4:
    return ".debug_line.dwo";
  case 5:
    return version == 2 ? ".debug_loc.dwo" : ".debug_loclists.dwo";
  case 6:
    return ".debug_str_offsets.dwo";
  case 7:
    return version == 2 ? ".debug_macinfo.dwo" : ".debug_macro.dwo";
  case 8:
    return version == 2 ? ".debug_macro.dwo" : ".debug_rnglists.dwo";
  default:
    return nullptr;
  }
}

struct Sections {
  std::map<std::string, std::vector<uint8_t>> bytes;
};

bool read_sections(Elf *elf, Sections &out) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0)
    return false;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
      continue;
    const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (!name || std::strncmp(name, ".debug_", 7) != 0)
      continue;
    Elf_Data *data = elf_rawdata(scn, nullptr);
    if (!data || !data->d_buf)
      continue;
    auto *p = static_cast<const uint8_t *>(data->d_buf);
    out.bytes[name].assign(p, p + data->d_size);
  }
  return true;
}

uint32_t u32(const std::vector<uint8_t> &b, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

uint64_t u64(const std::vector<uint8_t> &b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

// Writes `sections` as a relocatable ELF file to `fd`.
bool write_dwo(int fd, const GElf_Ehdr &like,
               const std::map<std::string, std::vector<uint8_t>> &sections) {
  Elf *out = elf_begin(fd, ELF_C_WRITE, nullptr);
  if (!out)
    return false;
  bool ok = gelf_newehdr(out, gelf_getclass(out) == ELFCLASS32 ? ELFCLASS32
                                                               : ELFCLASS64);
  GElf_Ehdr eh;
  ok = ok && gelf_getehdr(out, &eh);
  if (ok) {
    std::memcpy(eh.e_ident, like.e_ident, EI_NIDENT);
    eh.e_type = ET_REL;
    eh.e_machine = like.e_machine;
    eh.e_version = EV_CURRENT;
    ok = gelf_update_ehdr(out, &eh);
  }
  std::string names(1, '\0');
  std::vector<std::pair<Elf_Scn *, size_t>> made;
  for (const auto &[name, bytes] : sections) {
    if (!ok)
      break;
    Elf_Scn *scn = elf_newscn(out);
    Elf_Data *d = scn ? elf_newdata(scn) : nullptr;
    if (!d) {
      ok = false;
      break;
    }
    d->d_buf = const_cast<uint8_t *>(bytes.data());
    d->d_size = bytes.size();
    d->d_type = ELF_T_BYTE;
    d->d_align = 1;
    made.emplace_back(scn, names.size());
    names += name;
    names.push_back('\0');
  }
  Elf_Scn *strscn = ok ? elf_newscn(out) : nullptr;
  Elf_Data *sd = strscn ? elf_newdata(strscn) : nullptr;
  if (sd) {
    size_t strname = names.size();
    names += ".shstrtab";
    names.push_back('\0');
    sd->d_buf = names.data();
    sd->d_size = names.size();
    sd->d_type = ELF_T_BYTE;
    sd->d_align = 1;
    made.emplace_back(strscn, strname);
    for (auto [scn, name_off] : made) {
      GElf_Shdr sh;
      gelf_getshdr(scn, &sh);
      sh.sh_name = static_cast<GElf_Word>(name_off);
      sh.sh_type = scn == strscn ? SHT_STRTAB : SHT_PROGBITS;
      sh.sh_addralign = 1;
      gelf_update_shdr(scn, &sh);
    }
    GElf_Ehdr final_eh;
    gelf_getehdr(out, &final_eh);
    final_eh.e_shstrndx = static_cast<uint16_t>(elf_ndxscn(strscn));
    gelf_update_ehdr(out, &final_eh);
    ok = elf_update(out, ELF_C_WRITE) >= 0;
  } else {
    ok = false;
  }
  elf_end(out);
  return ok;
}

} // namespace

int extract_package_unit(const std::string &path, uint64_t unit_id) {
  elf_version(EV_CURRENT);
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return -1;
  Elf *elf = elf_begin(in, ELF_C_READ, nullptr);
  Sections s;
  GElf_Ehdr eh{};
  bool ok = elf && gelf_getehdr(elf, &eh) && read_sections(elf, s);
  if (elf)
    elf_end(elf);
  ::close(in);
  auto index = s.bytes.find(".debug_cu_index");
  if (!ok || index == s.bytes.end() || index->second.size() < 16)
    return -1;
  const auto &ix = index->second;
  uint32_t version = u32(ix, 0) & 0xffff;
  uint32_t columns = u32(ix, 4), units = u32(ix, 8), slots = u32(ix, 12);
  size_t hashes = 16, rows = hashes + 8ull * slots, ids = rows + 4ull * slots;
  size_t offsets = ids + 4ull * columns;
  size_t sizes = offsets + 4ull * columns * units;
  if (columns == 0 || columns > 16 || slots > (1u << 24) ||
      sizes + 4ull * columns * units > ix.size())
    return -1;
  uint32_t row = 0;
  for (uint32_t i = 0; i < slots && !row; i++)
    if (u64(ix, hashes + 8ull * i) == unit_id)
      row = u32(ix, rows + 4ull * i);
  if (row == 0 || row > units)
    return -1;
  std::map<std::string, std::vector<uint8_t>> unit;
  for (uint32_t c = 0; c < columns; c++) {
    const char *name = column_section(u32(ix, ids + 4ull * c), version);
    auto it = name ? s.bytes.find(name) : s.bytes.end();
    if (it == s.bytes.end())
      continue;
    size_t cell = 4ull * ((row - 1) * columns + c);
    uint64_t off = u32(ix, offsets + cell), size = u32(ix, sizes + cell);
    if (off + size > it->second.size())
      return -1;
    unit[name].assign(it->second.begin() + off,
                      it->second.begin() + off + size);
  }
  // Shared by every unit: the strings.
  if (auto str = s.bytes.find(".debug_str.dwo"); str != s.bytes.end())
    unit[".debug_str.dwo"] = str->second;
  if (!unit.count(".debug_info.dwo"))
    return -1;
  int fd = memfd_create("ubtrace-dwp-unit", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  if (!write_dwo(fd, eh, unit) || ::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

} // namespace ubtrace::runtime::symbols
