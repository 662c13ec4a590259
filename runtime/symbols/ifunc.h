// IFUNC symbols (STT_GNU_IFUNC). The address of such a symbol is its
// resolver, a function the dynamic linker runs once per process to pick an
// implementation (glibc's memcpy, strlen, memset pick a variant for the
// CPU); calls go to the implementation. A probe on the symbol's address
// fires once, in the resolver: `uprobe:libc:memcpy` counted 1 of 1000
// calls. Probes on IFUNCs are moved to the implementation the traced
// process uses, found, most exact first:
//
//  1. in the process: the GOT slot an R_X86_64_IRELATIVE relocation with
//     the resolver as addend fills (the library's own calls go through it;
//     the dynamic linker resolves these at load time, lazily bound or not);
//  2. in the CLI itself, when it has the same file loaded (the CPU is the
//     same; the choice also depends on GLIBC_TUNABLES, so the process's
//     must equal the CLI's): dlvsym() runs the resolver here. Nothing is
//     ever loaded into the CLI for this (RTLD_NOLOAD).
//
// Otherwise the probe stays on the resolver, with a warning saying so.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/attach_point.h"
#include "runtime/symbols/binary_cache.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::runtime::symbols {

// The GOT slots (vaddrs of `file`) that R_X86_64_IRELATIVE relocations fill
// with the implementation of the IFUNC whose resolver is at `resolver`.
std::vector<uint64_t> irelative_slots(const ElfFile &file, uint64_t resolver);

// Reads the u64 at a run-time address of the traced process.
using ReadU64 = std::function<std::optional<uint64_t>(uint64_t address)>;

// The vaddr (in `binary`) of the implementation that the IFUNC `names`
// (a symbol and its aliases), whose resolver is at `resolver`, resolved to
// in the process `space` describes; an error says why it cannot be known.
Result<uint64_t> ifunc_implementation(const BinaryInfo &binary,
                                      const std::vector<std::string> &names,
                                      uint64_t resolver,
                                      const AddressSpace &space,
                                      const ReadU64 &read);

// `probe` (on an IFUNC's resolver, probe.ifunc) moved to the
// implementation at `implementation` (a vaddr of `binary`): address, file
// offset, the function's bounds; its names stay (`probe` prints what the
// script named, `func` the implementation).
Result<ResolvedProbe> at_implementation(const BinaryInfo &binary,
                                        ResolvedProbe probe,
                                        uint64_t implementation);

} // namespace ubtrace::runtime::symbols
