// The parts of a BPF ELF object the loader needs (sections, symbols,
// relocations), read once with libelf into plain vectors so the rest of the
// loader never touches libelf.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::vm::loader {

struct ElfSection {
  uint32_t index = 0;
  std::string name;
  uint32_t type = 0;  // SHT_*
  uint64_t flags = 0; // SHF_*
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  std::vector<uint8_t> bytes; // empty for SHT_NOBITS
};

struct ElfSymbol {
  std::string name;
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = 0;     // STT_*
  uint8_t bind = 0;     // STB_*
  uint32_t section = 0; // st_shndx
};

struct ElfReloc {
  uint64_t offset = 0; // byte offset in the section it applies to
  uint32_t symbol = 0; // index into symbols()
  uint32_t type = 0;   // R_BPF_*
};

class ElfImage {
public:
  static Result<ElfImage> read(std::span<const uint8_t> bytes);

  const std::vector<ElfSection> &sections() const { return sections_; }
  const std::vector<ElfSymbol> &symbols() const { return symbols_; }
  // Relocations of section `index` (from its SHT_REL section), if any.
  const std::vector<ElfReloc> &relocations_for(uint32_t index) const;
  const ElfSection *find_section(std::string_view name) const;

private:
  std::vector<ElfSection> sections_;
  std::vector<ElfSymbol> symbols_;
  std::vector<std::vector<ElfReloc>> relocs_; // by target section index
};

} // namespace ubtrace::vm::loader
