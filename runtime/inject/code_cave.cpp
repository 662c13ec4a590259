#include "runtime/inject/code_cave.h"

#include "runtime/inject/target_glibc.h"

#include <algorithm>
#include <cstring>
#include <elf.h>

namespace ubtrace::runtime::inject {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kAlign = 64;

uint64_t page_up(uint64_t value) {
  return (value + kPage - 1) & ~(kPage - 1);
}

// The program headers of the object whose first mapping is `first`, from
// the target's memory, and its load bias.
struct LoadedObject {
  uint64_t bias = 0;
  std::vector<Elf64_Phdr> loads;
};

Result<LoadedObject> read_object(const MappedRegion &first,
                                 const RemoteMemory &memory) {
  auto ehdr = memory.read_value<Elf64_Ehdr>(first.start);
  if (!ehdr)
    return std::move(ehdr).take_error();
  if (std::memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 ||
      ehdr->e_ident[EI_CLASS] != ELFCLASS64 ||
      ehdr->e_phentsize != sizeof(Elf64_Phdr) || ehdr->e_phnum == 0 ||
      ehdr->e_phnum > 256 ||
      ehdr->e_phoff + ehdr->e_phnum * sizeof(Elf64_Phdr) >
          first.end - first.start)
    return make_error(first.path + ": no ELF program headers in its mapping");
  std::vector<Elf64_Phdr> phdrs(ehdr->e_phnum);
  if (auto ok = memory.read(first.start + ehdr->e_phoff, phdrs.data(),
                            phdrs.size() * sizeof(Elf64_Phdr));
      !ok)
    return std::move(ok).take_error();
  LoadedObject object;
  bool have_bias = false;
  for (const Elf64_Phdr &ph : phdrs) {
    if (ph.p_type != PT_LOAD)
      continue;
    if (ph.p_offset == 0 && !have_bias) {
      object.bias = first.start - (ph.p_vaddr & ~(kPage - 1));
      have_bias = true;
    }
    object.loads.push_back(ph);
  }
  if (!have_bias)
    return make_error(first.path + ": no PT_LOAD maps its ELF header");
  return object;
}

// The cave of `text` (an executable mapping of `object`), if it has one.
std::optional<std::pair<uint64_t, uint64_t>>
cave_of(const MappedRegion &text, const LoadedObject &object) {
  for (const Elf64_Phdr &ph : object.loads) {
    if (!(ph.p_flags & PF_X) || ph.p_memsz != ph.p_filesz)
      continue;
    uint64_t end = object.bias + ph.p_vaddr + ph.p_filesz;
    uint64_t start = (end + kAlign - 1) & ~(kAlign - 1);
    uint64_t limit = page_up(end);
    if (start >= limit || !text.contains(start) || limit > text.end)
      continue;
    bool shared = false;
    for (const Elf64_Phdr &other : object.loads) {
      if (&other == &ph)
        continue;
      uint64_t lo = object.bias + other.p_vaddr;
      uint64_t hi = lo + other.p_memsz;
      shared = shared || (lo < limit && hi > (end & ~(kPage - 1)));
    }
    if (!shared)
      return std::make_pair(start, limit);
  }
  return std::nullopt;
}

int rank(const MappedRegion &region, const std::string &executable) {
  auto part = classify_glibc_path(region.path);
  if (part == GlibcPart::Libc)
    return 0;
  if (part == GlibcPart::Loader)
    return 1;
  return region.path == executable ? 2 : 3;
}

} // namespace

Result<CodeCave> find_code_cave(const std::vector<MappedRegion> &maps,
                                const RemoteMemory &memory,
                                const std::vector<uint8_t> &code,
                                const std::string &executable) {
  std::vector<const MappedRegion *> texts;
  for (int wanted = 0; wanted <= 3; ++wanted)
    for (const MappedRegion &region : maps)
      if (region.executable && !region.path.empty() && region.path[0] == '/' &&
          rank(region, executable) == wanted)
        texts.push_back(&region);
  std::optional<CodeCave> empty;
  for (const MappedRegion *text : texts) {
    const MappedRegion *first = nullptr;
    for (const MappedRegion &region : maps)
      if (region.path == text->path && region.inode == text->inode &&
          region.offset == 0 && region.start <= text->start)
        first = &region;
    if (!first)
      continue;
    auto object = read_object(*first, memory);
    if (!object)
      continue;
    auto range = cave_of(*text, *object);
    if (!range || range->second - range->first < code.size())
      continue;
    std::vector<uint8_t> bytes(range->second - range->first);
    if (!memory.read(range->first, bytes.data(), bytes.size()))
      continue;
    for (uint64_t at = 0; at + code.size() <= bytes.size(); at += kAlign) {
      auto here = bytes.begin() + static_cast<ptrdiff_t>(at);
      auto there = here + static_cast<ptrdiff_t>(code.size());
      CodeCave cave{range->first + at, bytes.size() - at, text->path, false};
      if (std::equal(here, there, code.begin()))
        return CodeCave{cave.address, cave.size, cave.path, true};
      if (!empty && std::all_of(here, there, [](uint8_t b) { return b == 0; }))
        empty = cave;
    }
  }
  if (empty)
    return *empty;
  return make_error("no code cave of " + std::to_string(code.size()) +
                    " bytes in its executable mappings");
}

Result<void> install_code(const CodeCave &cave, const RemoteMemory &memory,
                          const std::vector<uint8_t> &code) {
  if (!cave.holds_code)
    if (auto ok = memory.write(cave.address, code.data(), code.size()); !ok)
      return ok;
  std::vector<uint8_t> check(code.size());
  if (auto ok = memory.read(cave.address, check.data(), check.size()); !ok)
    return ok;
  if (check != code)
    return make_error("the code written at " + cave.path +
                      "'s cave does not read back");
  return {};
}

} // namespace ubtrace::runtime::inject
