#include "runtime/symbols/usdt_notes.h"

#include "runtime/symbols/elf_symbols.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <map>

namespace ubtrace::runtime::symbols {
namespace {

constexpr uint32_t kStapsdtNoteType = 3;
constexpr std::string_view kStapsdtOwner = "stapsdt";

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Parses one descriptor; nullopt when malformed (skipped, like bpftrace).
std::optional<UsdtNote> parse_note(const char *desc, size_t size,
                                   size_t addr_size) {
  if (size < 3 * addr_size + 3)
    return std::nullopt;
  auto addr_at = [&](size_t i) {
    if (addr_size == 8) {
      uint64_t v;
      std::memcpy(&v, desc + i * 8, 8);
      return v;
    }
    uint32_t v;
    std::memcpy(&v, desc + i * 4, 4);
    return uint64_t{v};
  };
  UsdtNote note;
  note.pc = addr_at(0);
  note.base = addr_at(1);
  note.semaphore = addr_at(2);
  const char *p = desc + 3 * addr_size;
  const char *end = desc + size;
  const char *fields[3];
  for (auto &field : fields) {
    const char *nul = static_cast<const char *>(std::memchr(p, 0, end - p));
    if (!nul)
      return std::nullopt;
    field = p;
    p = nul + 1;
  }
  note.provider = fields[0];
  note.name = fields[1];
  note.args = fields[2];
  if (note.provider.empty() || note.name.empty())
    return std::nullopt;
  return note;
}

} // namespace

Result<std::vector<UsdtNote>> read_usdt_notes(const ElfFile &file) {
  std::vector<UsdtNote> notes;
  const Section *section = file.section(".note.stapsdt");
  if (!section)
    return notes;
  if (section->type != SHT_NOTE)
    return make_error("'" + file.path() + "': .note.stapsdt is not a note");
  Elf_Scn *scn = elf_getscn(file.handle(), section->index);
  Elf_Data *data = scn ? elf_getdata(scn, nullptr) : nullptr;
  if (!data)
    return make_error("'" + file.path() + "': cannot read .note.stapsdt");
  size_t addr_size = file.is_64bit() ? 8 : 4;
  size_t off = 0, name_off = 0, desc_off = 0;
  GElf_Nhdr nh;
  const char *base = static_cast<const char *>(data->d_buf);
  while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
    if (nh.n_type != kStapsdtNoteType ||
        nh.n_namesz != kStapsdtOwner.size() + 1 ||
        std::memcmp(base + name_off, kStapsdtOwner.data(),
                    kStapsdtOwner.size()) != 0)
      continue;
    if (auto note = parse_note(base + desc_off, nh.n_descsz, addr_size))
      notes.push_back(std::move(*note));
  }
  return notes;
}

Result<std::vector<UsdtProbe>> read_usdt_probes(const ElfFile &file,
                                                const SymbolTable *symbols) {
  auto notes = read_usdt_notes(file);
  if (!notes)
    return std::move(notes).take_error();
  const Section *base_section = file.section(".stapsdt.base");
  const bool is_exec = file.kind() == ElfKind::Executable;

  std::map<std::pair<std::string, std::string>, UsdtProbe> probes;
  for (UsdtNote &note : *notes) {
    uint64_t delta = 0;
    if (base_section && note.base)
      delta = base_section->vaddr - note.base;
    const std::string where =
        "'" + file.path() + "': usdt " + note.provider + ":" + note.name;

    UsdtSite site;
    site.vaddr = note.pc + delta;
    auto offset = file.vaddr_to_offset(site.vaddr);
    if (!offset)
      return make_error(where + ": pc " + hex(site.vaddr) +
                        " is in no loadable segment");
    site.file_offset = *offset;
    site.args_text = note.args;
    // An argument string we cannot parse spoils only this site's arguments:
    // the probe can still fire (bpftrace 0.17 refused the whole file).
    if (auto args = parse_usdt_args(note.args)) {
      site.args = std::move(*args);
      resolve_usdt_arg_symbols(site.args, site.vaddr, is_exec, symbols);
    } else {
      site.args_error = args.error();
    }

    UsdtProbe &probe = probes[{note.provider, note.name}];
    probe.provider = note.provider;
    probe.name = note.name;
    probe.sites.push_back(std::move(site));

    if (note.semaphore) {
      uint64_t vaddr = note.semaphore + delta;
      const LoadSegment *seg = file.segment_of(vaddr);
      if (!seg)
        return make_error(where + ": semaphore " + hex(vaddr) +
                          " is in no loadable segment");
      if (seg->executable)
        return make_error(where + ": semaphore " + hex(vaddr) +
                          " is in an executable segment");
      UsdtSemaphore sema{vaddr, vaddr - seg->vaddr + seg->offset};
      if (probe.semaphore && probe.semaphore->vaddr != vaddr)
        return make_error(where + ": sites disagree on the semaphore");
      probe.semaphore = sema;
    }
  }

  std::vector<UsdtProbe> out;
  out.reserve(probes.size());
  for (auto &[key, probe] : probes) {
    std::sort(
        probe.sites.begin(), probe.sites.end(),
        [](const UsdtSite &a, const UsdtSite &b) { return a.vaddr < b.vaddr; });
    out.push_back(std::move(probe));
  }
  return out;
}

} // namespace ubtrace::runtime::symbols
