// A code cave: bytes of the target's own executable mapping that no code
// of it ever runs, where the injector puts the bootstrap code
// (bootstrap.S), so that nothing needs to be mapped executable for it.
//
// Where: the tail of the last page of an executable PT_LOAD segment, past
// its p_filesz (the loader maps whole pages; what lies beyond the
// segment's end in that page is file padding or the start of the next
// segment's bytes, outside every function). The segment must end in a
// page no other segment shares, with p_memsz == p_filesz, and the bytes
// used must read as zero in the target (or already hold exactly this
// code: a previous injection's, which is reused). The ELF headers are read
// from the target's memory (the file's first mapping), so the file itself
// need not be reachable. Writing goes through /proc/PID/mem, which copies
// the page for this process only (other processes mapping the same file
// keep theirs). Tried in order: libc, the dynamic loader, the program,
// then every other executable file mapping.
//
// The cave is never given back: its bytes stay in the process's private
// copy of that page (a later injection finds and reuses them).
#pragma once

#include "runtime/inject/proc_maps.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::runtime::inject {

struct CodeCave {
  uint64_t address = 0;    // 64-byte aligned
  uint64_t size = 0;       // usable bytes from address
  std::string path;        // the file it is in
  bool holds_code = false; // already holds the code it was searched for
};

// Finds a cave of at least code.size() bytes (preferring one that holds
// `code` already).
Result<CodeCave> find_code_cave(const std::vector<MappedRegion> &maps,
                                const RemoteMemory &memory,
                                const std::vector<uint8_t> &code,
                                const std::string &executable);

// Writes `code` there (unless it holds it already) and reads it back.
Result<void> install_code(const CodeCave &cave, const RemoteMemory &memory,
                          const std::vector<uint8_t> &code);

} // namespace ubtrace::runtime::inject
