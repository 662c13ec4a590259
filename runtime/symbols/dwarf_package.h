// DWARF packages (.dwp, made by dwp/llvm-dwp from split DWARF's .dwo
// files): one unit's contributions cut out into a .dwo of its own.
//
// The libdw this builds against (elfutils 0.188) reads .dwo files but not
// packages; a package is a set of .dwo files concatenated section by
// section with an index (.debug_cu_index) saying where each unit's part of
// each section is. Cutting one unit's parts back out gives libdw the .dwo
// it can read.
#pragma once

#include <cstdint>
#include <string>

namespace ubtrace::runtime::symbols {

// A memory file (memfd, close-on-exec) holding the unit `unit_id` of the
// package at `path` as a .dwo ELF file; -1 when the package cannot be read
// or has no such unit. The caller closes it.
int extract_package_unit(const std::string &path, uint64_t unit_id);

} // namespace ubtrace::runtime::symbols
