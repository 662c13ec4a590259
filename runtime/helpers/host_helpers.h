// The kernel helpers a probe program calls that are about the running
// process rather than maps: time, pid/tid, uid/gid, comm, fault-safe memory
// reads, user stacks, signals, cgroup, random numbers. Plain C functions of
// the kernel's signatures, usable in the CLI (interpreter) and inside the
// traced process (the agent's JIT'd code): no exceptions, no allocation, no
// locks.
#pragma once

#include "runtime/maps/helper_table.h"

#include <cstdint>
#include <span>

namespace ubtrace::runtime::helpers {

// By BPF helper id, with the five-u64 signature (see maps/helper_table.h).
std::span<const maps::HelperEntry> host_helpers();

// Copies `size` bytes of this process's memory at `src` to `dst`. Never
// faults: returns 0, or -EFAULT with dst zeroed when any byte is unreadable.
long safe_read(void *dst, uint64_t size, const void *src);
// Copies a NUL-terminated string of at most size-1 bytes plus the NUL;
// returns the length including the NUL, or -EFAULT (dst empty).
long safe_read_str(void *dst, uint64_t size, const void *src);

} // namespace ubtrace::runtime::helpers
