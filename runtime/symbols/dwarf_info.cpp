#include "runtime/symbols/dwarf_info.h"

#include "runtime/symbols/demangle.h"

#include <algorithm>
#include <cstdlib>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

namespace ubtrace::runtime::symbols {

struct DwarfInfo::Impl {
  int fd = -1;
  Dwarf *dwarf = nullptr;
  struct CuRange {
    uint64_t low, high;
    Dwarf_Off cu_offset;
  };
  std::vector<CuRange> ranges; // sorted by low

  ~Impl() {
    if (dwarf)
      dwarf_end(dwarf);
    if (fd >= 0)
      ::close(fd);
  }

  void index_units() {
    Dwarf_CU *cu = nullptr;
    Dwarf_Die cudie;
    uint8_t unit_type = 0;
    while (dwarf_get_units(dwarf, cu, &cu, nullptr, &unit_type, &cudie,
                           nullptr) == 0) {
      if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
        continue;
      Dwarf_Addr base, start, end;
      ptrdiff_t off = 0;
      while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0)
        if (end > start)
          ranges.push_back({start, end, dwarf_dieoffset(&cudie)});
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const CuRange &a, const CuRange &b) { return a.low < b.low; });
  }

  bool cu_of(uint64_t addr, Dwarf_Die &out) const {
    auto it = std::upper_bound(
        ranges.begin(), ranges.end(), addr,
        [](uint64_t a, const CuRange &r) { return a < r.low; });
    // Ranges of different CUs do not overlap in sane binaries, but walk
    // back a little in case a large range encloses smaller ones.
    for (int steps = 0; it != ranges.begin() && steps < 8; ++steps) {
      --it;
      if (addr >= it->low && addr < it->high)
        return dwarf_offdie(dwarf, it->cu_offset, &out) != nullptr;
    }
    return false;
  }
};

DwarfInfo::DwarfInfo(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DwarfInfo::~DwarfInfo() = default;

std::unique_ptr<DwarfInfo> DwarfInfo::open(const std::string &path) {
  auto impl = std::make_unique<Impl>();
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0)
    return nullptr;
  impl->dwarf = dwarf_begin(impl->fd, DWARF_C_READ);
  if (!impl->dwarf)
    return nullptr;
  impl->index_units();
  if (impl->ranges.empty())
    return nullptr;
  return std::unique_ptr<DwarfInfo>(new DwarfInfo(std::move(impl)));
}

namespace {

std::string function_name(Dwarf_Die *die, bool demangle_names) {
  Dwarf_Attribute attr;
  // Prefer the linkage name (it carries namespaces and classes), found on
  // the DIE or through its abstract origin / specification.
  for (int name_attr : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name_attr, &attr)) {
      if (const char *s = dwarf_formstring(&attr))
        return demangle_names ? demangle_or_self(s) : std::string(s);
    }
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr))
    if (const char *s = dwarf_formstring(&attr))
      return s;
  return "??";
}

std::optional<SourceLocation> call_site(Dwarf_Die *inlined,
                                        Dwarf_Files *files) {
  Dwarf_Attribute attr;
  Dwarf_Word file_index = 0, line = 0;
  if (!files || !dwarf_attr(inlined, DW_AT_call_file, &attr) ||
      dwarf_formudata(&attr, &file_index) != 0)
    return std::nullopt;
  if (dwarf_attr(inlined, DW_AT_call_line, &attr))
    dwarf_formudata(&attr, &line);
  const char *file = dwarf_filesrc(files, file_index, nullptr, nullptr);
  if (!file)
    return std::nullopt;
  return SourceLocation{file, static_cast<uint32_t>(line)};
}

// Descends from `parent` through the DIEs whose code holds `addr`
// (functions, inlined instances, lexical blocks; namespaces and classes
// hold functions without code of their own), appending each inlined
// instance on the way, outermost first.
void inlined_chain(Dwarf_Die *parent, uint64_t addr,
                   std::vector<Dwarf_Die> &chain, int depth) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(parent, &child) != 0)
    return;
  do {
    int tag = dwarf_tag(&child);
    switch (tag) {
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
      if (dwarf_haspc(&child, addr) <= 0)
        continue;
      if (tag == DW_TAG_inlined_subroutine)
        chain.push_back(child);
      inlined_chain(&child, addr, chain, depth + 1);
      return;
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type: {
      Dwarf_Die inner = child;
      inlined_chain(&inner, addr, chain, depth + 1);
      continue;
    }
    default:
      continue;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

} // namespace

DwarfLookup DwarfInfo::lookup(uint64_t vaddr, bool demangle_names) const {
  DwarfLookup out;
  Dwarf_Die cudie;
  if (!impl_->cu_of(vaddr, cudie))
    return out;

  std::optional<SourceLocation> here;
  if (Dwarf_Line *line = dwarf_getsrc_die(&cudie, vaddr)) {
    int lineno = 0;
    dwarf_lineno(line, &lineno);
    if (const char *file = dwarf_linesrc(line, nullptr, nullptr))
      here = SourceLocation{file, static_cast<uint32_t>(lineno)};
  }

  Dwarf_Files *files = nullptr;
  size_t nfiles = 0;
  if (dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
    files = nullptr;

  // The inlined instances containing the address, innermost first.
  // (dwarf_getscopes continues from an inlined instance into its abstract
  // definition, not into the code it was inlined into: it would lose every
  // inlined level but the innermost.)
  std::vector<Dwarf_Die> chain;
  inlined_chain(&cudie, vaddr, chain, 0);
  std::optional<SourceLocation> location = here;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out.inlined.push_back({function_name(&*it, demangle_names), location});
    // The code around this inlined call is at its call site.
    location = call_site(&*it, files);
  }
  out.location = location;
  return out;
}

} // namespace ubtrace::runtime::symbols
