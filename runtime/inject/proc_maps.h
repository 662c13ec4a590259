// The parts of /proc/PID/maps the injector needs: which file is mapped
// where, with which protection.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::inject {

struct MappedRegion {
  uint64_t start = 0, end = 0;
  uint64_t offset = 0; // file offset mapped at `start`
  bool readable = false, writable = false, executable = false;
  uint64_t inode = 0;
  std::string path; // "" anonymous, "[stack]", "/usr/lib/..."
  bool deleted = false;

  bool contains(uint64_t address) const {
    return address >= start && address < end;
  }
};

std::vector<MappedRegion> parse_maps(std::string_view text);
Result<std::vector<MappedRegion>> read_maps(pid_t pid);

// The region that holds `address`, or null.
const MappedRegion *find_region(const std::vector<MappedRegion> &maps,
                                uint64_t address);

} // namespace ubtrace::runtime::inject
