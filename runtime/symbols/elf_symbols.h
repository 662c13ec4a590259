// The symbols of a binary: .symtab and .dynsym of the file, of its
// MiniDebugInfo (.gnu_debugdata) and of its separate debug file, merged
// (bcc and bpftrace read all of them). Names are kept as stored: mangled,
// with any version suffix ("memcpy@@GLIBC_2.14").
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/elf_file.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ubtrace::runtime::symbols {

enum class SymbolType : uint8_t {
  Function,         // STT_FUNC
  IndirectFunction, // STT_GNU_IFUNC (the resolver, which uprobes probe)
  Object,           // STT_OBJECT, STT_TLS, STT_COMMON
  NoType,           // STT_NOTYPE (assembler labels)
};

enum class SymbolBinding : uint8_t { Local, Global, Weak };

struct ElfSymbol {
  std::string name;
  uint64_t vaddr = 0;
  uint64_t size = 0;
  SymbolType type = SymbolType::NoType;
  SymbolBinding binding = SymbolBinding::Local;

  // What uprobes attach to and listings show (bpftrace: FUNC and IFUNC).
  bool is_function() const {
    return type == SymbolType::Function || type == SymbolType::IndirectFunction;
  }
  bool contains(uint64_t addr) const {
    return addr == vaddr || (addr > vaddr && addr - vaddr < size);
  }
};

struct SymbolLoadOptions {
  bool debug_files = true; // separate debug file and .gnu_debugdata
  std::string debug_root = "/usr/lib/debug";
};

class SymbolTable {
public:
  // Move-only: the name index points into the symbols' strings.
  SymbolTable(SymbolTable &&) = default;
  SymbolTable &operator=(SymbolTable &&) = default;
  SymbolTable(const SymbolTable &) = delete;
  SymbolTable &operator=(const SymbolTable &) = delete;

  static Result<SymbolTable> load(const ElfFile &file,
                                  const SymbolLoadOptions &options = {});
  // From symbols already read (tests, synthetic tables).
  static SymbolTable from_symbols(std::vector<ElfSymbol> symbols);

  // Every distinct (name, vaddr) symbol, sorted by vaddr then name.
  std::span<const ElfSymbol> symbols() const { return symbols_; }
  // The function symbols called `name` (several for versioned duplicates
  // and local functions of the same name in different files).
  std::vector<const ElfSymbol *> functions_named(std::string_view name) const;
  // The data symbol (object or label) called `name`, for USDT arguments.
  const ElfSymbol *object_named(std::string_view name) const;
  // The function containing `vaddr`, picking one name among aliases:
  // global before weak before local, then the name with the fewest leading
  // underscores, then the shortest, then the first in byte order.
  const ElfSymbol *function_at(uint64_t vaddr) const;
  // Every function symbol starting exactly at `vaddr` (aliases).
  std::vector<const ElfSymbol *> functions_starting_at(uint64_t vaddr) const;
  // Where the names came from, for messages ("+ /usr/lib/debug/...").
  const std::vector<std::string> &sources() const { return sources_; }

private:
  SymbolTable() = default;
  void index();

  std::vector<ElfSymbol> symbols_;
  std::vector<uint32_t> functions_by_vaddr_; // indices into symbols_
  std::unordered_multimap<std::string_view, uint32_t> by_name_;
  std::vector<std::string> sources_;
  uint64_t max_function_size_ = 0;
};

// Whether `a` is a better name than `b` for the same address (see
// function_at).
bool preferred_alias(const ElfSymbol &a, const ElfSymbol &b);

} // namespace ubtrace::runtime::symbols
