// Separate debug files, found the way gdb and bcc find them: by build id
// under the debug root (/usr/lib/debug/.build-id/ab/cdef....debug), then by
// .gnu_debuglink next to the file, in its .debug/ folder and under the
// debug root. A candidate is only taken when its build id (or, without one,
// the debuglink CRC) matches, so a stale debug package never lends wrong
// names.
#pragma once

#include "runtime/symbols/elf_file.h"

#include <optional>
#include <string>
#include <vector>

namespace ubtrace::runtime::symbols {

inline constexpr const char *kDefaultDebugRoot = "/usr/lib/debug";

// Directories searched first, in this order (--debuginfo DIR): each for
// the debuglink name, .build-id/ab/cdef....debug and BASENAME.debug; a
// relative one from the current directory, then from the binary's. Set
// once by the CLI before any binary is read.
void set_debug_search_dirs(std::vector<std::string> dirs);

std::optional<std::string>
find_debug_file(const ElfFile &file,
                const std::string &debug_root = kDefaultDebugRoot);

// The CRC-32 .gnu_debuglink records (the IEEE polynomial, as zlib's).
uint32_t debuglink_crc32(const uint8_t *data, size_t size, uint32_t crc = 0);

// The ELF image stored xz-compressed in `.gnu_debugdata` (MiniDebugInfo:
// a symbol table for stripped binaries), if the file has one and libdw can
// decompress it.
std::optional<ElfFile> open_mini_debuginfo(const ElfFile &file);

} // namespace ubtrace::runtime::symbols
