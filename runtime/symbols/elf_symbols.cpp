#include "runtime/symbols/elf_symbols.h"

#include "runtime/symbols/debug_file.h"

#include <algorithm>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>

namespace ubtrace::runtime::symbols {
namespace {

bool symbol_type_of(unsigned char st_type, SymbolType &out) {
  switch (st_type) {
  case STT_FUNC:
    out = SymbolType::Function;
    return true;
  case STT_GNU_IFUNC:
    out = SymbolType::IndirectFunction;
    return true;
  case STT_OBJECT:
  case STT_TLS:
  case STT_COMMON:
    out = SymbolType::Object;
    return true;
  case STT_NOTYPE:
    out = SymbolType::NoType;
    return true;
  default: // sections, files
    return false;
  }
}

SymbolBinding binding_of(unsigned char st_bind) {
  switch (st_bind) {
  case STB_GLOBAL:
  case STB_GNU_UNIQUE:
    return SymbolBinding::Global;
  case STB_WEAK:
    return SymbolBinding::Weak;
  default:
    return SymbolBinding::Local;
  }
}

void read_symbol_sections(const ElfFile &file, std::vector<ElfSymbol> &out) {
  Elf *elf = file.handle();
  for (const Section &s : file.sections()) {
    if (s.type != SHT_SYMTAB && s.type != SHT_DYNSYM)
      continue;
    Elf_Scn *scn = elf_getscn(elf, s.index);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_entsize == 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data)
      continue;
    size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym))
        continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0)
        continue;
      SymbolType type;
      if (!symbol_type_of(GELF_ST_TYPE(sym.st_info), type))
        continue;
      const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (!name || !*name)
        continue;
      out.push_back(ElfSymbol{
          .name = name,
          .vaddr = sym.st_value,
          .size = sym.st_size,
          .type = type,
          .binding = binding_of(GELF_ST_BIND(sym.st_info)),
      });
    }
  }
}

int leading_underscores(const std::string &name) {
  int n = 0;
  while (n < static_cast<int>(name.size()) && name[n] == '_')
    ++n;
  return n;
}

int binding_rank(SymbolBinding b) {
  switch (b) {
  case SymbolBinding::Global:
    return 0;
  case SymbolBinding::Weak:
    return 1;
  case SymbolBinding::Local:
    return 2;
  }
  return 3;
}

} // namespace

bool preferred_alias(const ElfSymbol &a, const ElfSymbol &b) {
  if (a.is_function() != b.is_function())
    return a.is_function();
  if (binding_rank(a.binding) != binding_rank(b.binding))
    return binding_rank(a.binding) < binding_rank(b.binding);
  int ua = leading_underscores(a.name), ub = leading_underscores(b.name);
  if (ua != ub)
    return ua < ub;
  if (a.name.size() != b.name.size())
    return a.name.size() < b.name.size();
  return a.name < b.name;
}

Result<SymbolTable> SymbolTable::load(const ElfFile &file,
                                      const SymbolLoadOptions &options) {
  std::vector<ElfSymbol> symbols;
  std::vector<std::string> sources{file.path()};
  read_symbol_sections(file, symbols);
  if (options.debug_files) {
    if (auto mini = open_mini_debuginfo(file)) {
      read_symbol_sections(*mini, symbols);
      sources.push_back(mini->path());
    }
    if (auto path = find_debug_file(file, options.debug_root)) {
      if (auto debug = ElfFile::open(*path)) {
        read_symbol_sections(*debug, symbols);
        sources.push_back(*path);
      }
    }
  }
  SymbolTable table = from_symbols(std::move(symbols));
  table.sources_ = std::move(sources);
  return table;
}

SymbolTable SymbolTable::from_symbols(std::vector<ElfSymbol> symbols) {
  // One entry per (name, vaddr): the same symbol appears in .symtab,
  // .dynsym and the debug file. Keep the most informative copy (a size,
  // a function type, a global binding).
  std::sort(symbols.begin(), symbols.end(),
            [](const ElfSymbol &a, const ElfSymbol &b) {
              if (a.vaddr != b.vaddr)
                return a.vaddr < b.vaddr;
              if (a.name != b.name)
                return a.name < b.name;
              if (a.is_function() != b.is_function())
                return a.is_function();
              if (a.size != b.size)
                return a.size > b.size;
              return binding_rank(a.binding) < binding_rank(b.binding);
            });
  symbols.erase(std::unique(symbols.begin(), symbols.end(),
                            [](const ElfSymbol &a, const ElfSymbol &b) {
                              return a.vaddr == b.vaddr && a.name == b.name;
                            }),
                symbols.end());
  SymbolTable table;
  table.symbols_ = std::move(symbols);
  table.index();
  return table;
}

void SymbolTable::index() {
  by_name_.reserve(symbols_.size());
  for (uint32_t i = 0; i < symbols_.size(); ++i) {
    const ElfSymbol &s = symbols_[i];
    by_name_.emplace(s.name, i);
    if (s.is_function()) {
      functions_by_vaddr_.push_back(i);
      max_function_size_ = std::max(max_function_size_, s.size);
    }
  }
}

std::vector<const ElfSymbol *>
SymbolTable::functions_named(std::string_view name) const {
  std::vector<const ElfSymbol *> out;
  auto [lo, hi] = by_name_.equal_range(name);
  for (auto it = lo; it != hi; ++it)
    if (symbols_[it->second].is_function())
      out.push_back(&symbols_[it->second]);
  std::sort(out.begin(), out.end(), [](const ElfSymbol *a, const ElfSymbol *b) {
    return a->vaddr < b->vaddr;
  });
  return out;
}

const ElfSymbol *SymbolTable::object_named(std::string_view name) const {
  const ElfSymbol *best = nullptr;
  auto [lo, hi] = by_name_.equal_range(name);
  for (auto it = lo; it != hi; ++it) {
    const ElfSymbol &s = symbols_[it->second];
    if (s.is_function())
      continue;
    if (!best || preferred_alias(s, *best))
      best = &s;
  }
  return best;
}

const ElfSymbol *SymbolTable::function_at(uint64_t vaddr) const {
  // Candidates start at or below vaddr; none starting more than the largest
  // function size below it can reach it.
  auto it = std::upper_bound(
      functions_by_vaddr_.begin(), functions_by_vaddr_.end(), vaddr,
      [this](uint64_t v, uint32_t i) { return v < symbols_[i].vaddr; });
  const ElfSymbol *best = nullptr;
  while (it != functions_by_vaddr_.begin()) {
    const ElfSymbol &s = symbols_[*--it];
    if (vaddr - s.vaddr > max_function_size_)
      break;
    if (!s.contains(vaddr))
      continue;
    // The innermost (latest starting) symbol wins; aliases tie.
    if (best && s.vaddr < best->vaddr)
      break;
    if (!best || preferred_alias(s, *best))
      best = &s;
  }
  return best;
}

std::vector<const ElfSymbol *>
SymbolTable::functions_starting_at(uint64_t vaddr) const {
  std::vector<const ElfSymbol *> out;
  auto it = std::lower_bound(
      functions_by_vaddr_.begin(), functions_by_vaddr_.end(), vaddr,
      [this](uint32_t i, uint64_t v) { return symbols_[i].vaddr < v; });
  for (; it != functions_by_vaddr_.end() && symbols_[*it].vaddr == vaddr; ++it)
    out.push_back(&symbols_[*it]);
  return out;
}

} // namespace ubtrace::runtime::symbols
