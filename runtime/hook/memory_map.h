// A snapshot of this process's mappings (/proc/self/maps): protections of
// code pages before the patcher changes them, and free address ranges for
// trampolines near a target.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <vector>

namespace ubtrace::runtime::hook {

struct MemoryRegion {
  uint64_t start = 0;
  uint64_t end = 0;
  int prot = 0; // PROT_READ | PROT_WRITE | PROT_EXEC
};

struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;
};

// Lowest and highest addresses a mapping of ours may use: above
// vm.mmap_min_addr's usual value, below the 47-bit user space limit.
inline constexpr uint64_t kLowestMappable = 0x10000;
inline constexpr uint64_t kUserSpaceEnd = 0x7FFFFFFFF000ull;

class MemoryMap {
public:
  // /proc/self/maps, read through the procfs given to use_procfs when
  // there is one (a process that chroot()ed has no /proc of its own).
  static Result<MemoryMap> read_self();
  // `dirfd`: the root of a procfs mount, e.g. "/proc" opened before the
  // process confines itself, or the tracer's sent over. Kept, not owned
  // (-1: back to the process's /proc).
  static void use_procfs(int dirfd);
  // Opens `self/<relative>` (e.g. "self/task") through that procfs, or
  // /proc/self's where there is none or it is not procfs any more; -1 and
  // errno when neither opens.
  static int open_self(const char *relative, int flags);
  // Parses the text of a maps file (exposed for tests).
  static Result<MemoryMap> parse(const char *text, size_t size);

  // The region holding addr, or null.
  const MemoryRegion *find(uint64_t addr) const;
  // Unmapped ranges that intersect [lo, hi), clipped to it, ascending.
  std::vector<AddressRange> free_ranges(uint64_t lo, uint64_t hi) const;
  const std::vector<MemoryRegion> &regions() const { return regions_; }

private:
  std::vector<MemoryRegion> regions_; // sorted, non-overlapping
};

} // namespace ubtrace::runtime::hook
