// /proc/PID/maps: which file is mapped where, at which file offset.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::symbols {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0; // file offset mapped at `start`
  bool readable = false;
  bool writable = false;
  bool executable = false;
  bool shared = false;
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;
  uint64_t inode = 0;
  std::string path;     // "" for anonymous memory, "[stack]", "/usr/lib/..."
  bool deleted = false; // the file was unlinked (" (deleted)" stripped)

  bool contains(uint64_t addr) const { return addr >= start && addr < end; }
  // A mapping of a file (as opposed to [heap], [vdso], anonymous memory).
  bool is_file() const { return inode != 0 && !path.empty() && path[0] == '/'; }
  // The file offset `addr` is read from.
  uint64_t file_offset_of(uint64_t addr) const { return addr - start + offset; }
};

std::vector<Mapping> parse_proc_maps(std::string_view text);
Result<std::vector<Mapping>> read_proc_maps(pid_t pid);

// The distinct file paths a process maps, in address order (bpftrace's
// candidates for `uprobe:*:...` with -p).
std::vector<std::string> mapped_file_paths(const std::vector<Mapping> &maps);

} // namespace ubtrace::runtime::symbols
