// USDT probes of a binary: its `.note.stapsdt` notes (SystemTap SDT v3,
// note type 3, owner "stapsdt"), whose descriptor holds the probe's pc, the
// link-time address of `.stapsdt.base`, the semaphore address, then the
// provider, name and argument string, NUL-terminated.
//
// Addresses are adjusted as the SDT spec says: when the file has a
// `.stapsdt.base` section, (actual section address - note's base) is added
// to the pc and the semaphore, undoing prelink-style relocation.
//
// One provider:name may appear at several sites (the macro inlined or
// expanded more than once); each site has its own argument locations, and
// all share one semaphore.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/elf_file.h"
#include "runtime/symbols/usdt_args.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::runtime::symbols {

class SymbolTable;

// A note as stored, before any adjustment.
struct UsdtNote {
  std::string provider;
  std::string name;
  std::string args;
  uint64_t pc = 0;
  uint64_t base = 0;
  uint64_t semaphore = 0;
};

// The semaphore: a u16 the program tests before evaluating the probe's
// arguments. Whoever enables the probe increments it in each process
// (at bias + vaddr), and decrements it on detach.
struct UsdtSemaphore {
  uint64_t vaddr = 0;
  uint64_t file_offset = 0; // what the kernel's uprobe ref_ctr_offset takes
};

struct UsdtSite {
  uint64_t vaddr = 0;       // adjusted pc
  uint64_t file_offset = 0; // of the probe's nop
  std::string args_text;
  std::vector<UsdtArg> args;
  std::string args_error; // the argument string did not parse
};

struct UsdtProbe {
  std::string provider;
  std::string name;
  std::vector<UsdtSite> sites; // by address
  std::optional<UsdtSemaphore> semaphore;
};

// The raw notes, in file order.
Result<std::vector<UsdtNote>> read_usdt_notes(const ElfFile &file);

// Probes sorted by provider then name. `symbols` resolves symbol operands
// of arguments (may be null: those arguments become Unavailable). A file
// without notes has no probes (not an error).
Result<std::vector<UsdtProbe>> read_usdt_probes(const ElfFile &file,
                                                const SymbolTable *symbols);

} // namespace ubtrace::runtime::symbols
