// The agent's target: machine code made in the CLI for another process. The
// agent links no LLVM, so the CLI lifts the programs, compiles them to an
// x86-64 ELF relocatable object (small code model, PIC by default) and links
// that itself, for the address the agent will map it at, into one flat
// image: code, constant pools, a GOT and call stubs. The agent maps the
// bytes at that address (RW, copy, then RX) and calls the entry points.
//
//   // 1. compile: the size is known before the address
//   auto obj = jit::compile_remote_object(programs, target_maps);
//   // 2. the agent reserves obj->image_size bytes, aligned to
//   //    obj->alignment, and reports the address
//   // 3. link for that address against the agent's symbols
//   auto image = jit::link_remote_image(*obj, address, symbols);
//   // 4. the agent copies image->bytes to address, makes it RX, and calls
//   //    address + image->offset_of("entry") as uint64_t (*)(void *ctx)
//
// Symbols the image needs (names in remote_symbols.h, which the agent can
// include without LLVM): helper_symbol(id) for each helper called (uniform
// signature u64 fn(u64 x5)), kMapIterateSymbol if a program uses
// bpf_for_each_map_elem, and whatever libcalls the code generator chose
// (memset, memcpy, memmove); RemoteObject::required_symbols lists them. Map
// handles and value addresses are constants: pass the target's
// (rebase_maps() moves the CLI's bindings to the target's region mapping).
#pragma once

#include "runtime/jit/compile_times.h"
#include "runtime/jit/helper_lowering.h"
#include "runtime/jit/lifter.h"
#include "runtime/jit/optimize.h"

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace ubtrace::jit {

struct RemoteProgram {
  const vm::VerifiedProgram *program = nullptr;
  std::string entry; // symbol of its entry point, unique in the image
};

struct RemoteOptions {
  OptLevel level = OptLevel::O2;
  std::string triple = "x86_64-unknown-linux-gnu";
  // The CPU the target runs on; empty: this machine's (the traced process
  // runs here), with its features.
  std::string cpu;
  std::string features;
  // Position-independent code, linkable at any address. Without it, code
  // that takes an address uses 32-bit absolute relocations and links only
  // below 2 GiB.
  bool pic = true;
  SymbolHelpers::Options helpers;
  LiftOptions lift;
};

// Compiled, not yet placed.
struct RemoteObject {
  std::vector<uint8_t> elf;         // the relocatable object
  std::vector<std::string> entries; // entry symbols, in program order
  uint64_t image_size = 0;          // bytes link_remote_image produces
  uint64_t alignment = 1;           // the load address must be a multiple
  std::vector<std::string> required_symbols; // undefined symbols, sorted
  CompileTimes times;
};

Result<RemoteObject>
compile_remote_object(std::span<const RemoteProgram> programs,
                      std::span<const MapConstants> maps,
                      const RemoteOptions &options = {});

// The constants of maps the CLI bound in its own mapping of a region, moved
// to the target's mapping of the same region: handles and value addresses
// keep their offsets from the region's base. Zero value bases stay zero.
std::vector<MapConstants> rebase_maps(std::span<const vm::MapBinding> cli_maps,
                                      uint64_t cli_region_base,
                                      uint64_t target_region_base);

// Name -> address in the target process.
using SymbolTable = std::unordered_map<std::string, uint64_t>;

struct RemoteImage {
  uint64_t load_address = 0;
  std::vector<uint8_t> bytes; // exactly RemoteObject::image_size
  std::vector<std::pair<std::string, uint64_t>> entries; // name -> offset

  // The offset of an entry point, or UINT64_MAX.
  uint64_t offset_of(const std::string &entry) const;
};

Result<RemoteImage> link_remote_image(const RemoteObject &object,
                                      uint64_t load_address,
                                      const SymbolTable &symbols);

} // namespace ubtrace::jit
