// Internal to remote images: a small static linker for one x86-64 ELF
// relocatable object, written against <elf.h> alone (no LLVM), so the same
// code could run in the agent one day.
//
// Layout: allocatable sections (code first, then read-only data; .eh_frame
// is left out: the lifted code never unwinds), then a GOT with one slot per
// symbol a GOT-relative relocation or a far PLT call needs, then an 8-byte
// stub `jmp *slot(%rip)` per external function called through the PLT. The
// layout does not depend on the load address, so its size is known before.
//
// Relocations: R_X86_64_64, PC32, PC64, PLT32 (direct when the target is
// within +-2 GiB, else through the stub), GOTPCREL, GOTPCRELX,
// REX_GOTPCRELX, 32 and 32S (when the value fits).
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace ubtrace::jit::elf {

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t size = 0;
  uint64_t align = 1;
  std::span<const uint8_t> data; // empty for SHT_NOBITS
};

struct Symbol {
  std::string name;
  uint8_t type = 0;    // STT_*
  uint8_t binding = 0; // STB_*
  uint16_t shndx = 0;
  uint64_t value = 0;
};

struct Reloc {
  uint32_t section = 0; // the section it patches
  uint64_t offset = 0;
  uint32_t type = 0;
  uint32_t symbol = 0;
  int64_t addend = 0;
};

struct Relocatable {
  std::vector<Section> sections; // by section index
  std::vector<Symbol> symbols;   // by symbol index
  std::vector<Reloc> relocs;
};

// The sections' data view `bytes`: keep them while the result is used.
Result<Relocatable> parse(std::span<const uint8_t> bytes);

inline constexpr uint64_t kNotPlaced = ~uint64_t(0);

struct Plan {
  std::vector<uint64_t> section_offset; // by section index, or kNotPlaced
  std::vector<uint32_t> got;            // symbol index per GOT slot
  std::vector<uint32_t> stubs;          // symbol index per PLT stub
  uint64_t got_offset = 0;
  uint64_t stubs_offset = 0;
  uint64_t size = 0;
  uint64_t align = 1;
  std::vector<std::string> undefined; // names of undefined symbols, sorted
};

Result<Plan> plan(const Relocatable &object);

using Symbols = std::unordered_map<std::string, uint64_t>;

// The image's bytes for `load_address`; `symbols` resolves the undefined.
Result<std::vector<uint8_t>> link(const Relocatable &object, const Plan &plan,
                                  uint64_t load_address,
                                  const Symbols &symbols);

// Offset of a defined symbol in the image, or kNotPlaced.
uint64_t symbol_offset(const Relocatable &object, const Plan &plan,
                       const std::string &name);

} // namespace ubtrace::jit::elf
