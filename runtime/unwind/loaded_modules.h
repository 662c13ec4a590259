// The modules loaded in this process with their CFI rows, for the stack
// walker on the probe path (stack_walker.h).
//
// refresh_loaded_modules() runs off the probe path (the agent's thread, at
// attach and after each dlopen/dlclose the agent hears of): it lists the
// modules with dl_iterate_phdr, compiles each one's .eh_frame from its
// mapped copy (found through PT_GNU_EH_FRAME), and publishes the set.
// loaded_modules() is what a walk reads: one acquire load, no lock.
//
// Nothing published is freed while the process runs: a walk that began
// on an older set may still read it. Rows are kept per file (device,
// inode, where its .eh_frame is), so a library loaded again reuses its
// rows wherever it lands; the sets rotate through a fixed ring of buffers,
// and an entry's rows and count sit behind one pointer, so a walk that
// outlives several refreshes reads a mix of old and new module ranges at
// worst (every stack read is fault-safe), never rows of a wrong length.
// Memory for rows is capped (kMaxRowBytes); modules past it walk by frame
// pointers, counted.
#pragma once

#include "runtime/unwind/stack_walker.h"

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::unwind {

struct ModuleSet {
  size_t count = 0;
  const UnwindModule *modules = nullptr; // sorted by lo
};

inline constexpr size_t kMaxModules = 4096;
inline constexpr size_t kMaxRowBytes = size_t(256) << 20;

// The set walks use; empty before the first refresh.
ModuleSet loaded_modules();

struct RefreshStats {
  size_t modules = 0;     // modules listed
  size_t with_rows = 0;   // of them, with CFI rows
  size_t rows_built = 0;  // rows compiled in this refresh (new files)
  size_t over_budget = 0; // modules left without rows (kMaxRowBytes)
};

// Lists the loaded modules again and publishes them. Not thread-safe
// against itself (the agent calls it from one thread); safe against
// concurrent walks.
RefreshStats refresh_loaded_modules();

// Whether refreshes have been asked for (the agent turns them on when a
// program walks stacks).
bool loaded_modules_enabled();
void enable_loaded_modules();

} // namespace ubtrace::runtime::unwind
