// Walking an x86-64 user stack with CFI rows (cfi_table.h), falling back
// to frame pointers where a module has no row for an address.
//
// Probe-safe: no allocation, no lock, no libc; memory is read only through
// the caller's `read` (a fault-safe copy on the probe path), and the walk
// stops at the first frame that does not make sense (a return address of
// 0, a stack pointer that does not grow towards the caller's frames, an
// unreadable slot), so a corrupt stack ends the walk instead of the
// process.
#pragma once

#include "runtime/unwind/cfi_table.h"

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::unwind {

// A module's rows, immutable once published (count and rows together
// behind one pointer: a reader never sees one without the other).
struct CfiRows {
  size_t count = 0;
  const CfiRow *rows = nullptr;
};

// One loaded module: addresses in [lo, hi) are the module's vaddr plus
// `bias`.
struct UnwindModule {
  uint64_t lo = 0, hi = 0;
  uint64_t bias = 0;
  const CfiRows *table = nullptr;
};

struct UnwindRegs {
  uint64_t rip = 0, rsp = 0, rbp = 0;
};

struct WalkStats {
  uint32_t cfi_steps = 0; // frames found through CFI rows
  uint32_t fp_steps = 0;  // frames found through the rbp chain
};

// Writes the probed ip and the return address of each caller to `out`
// (at most `max`), returns how many. `modules` are sorted by `lo` and do
// not overlap. `read(dst, addr, size)` copies `size` bytes from `addr`
// and returns false when it cannot.
template <class Read>
size_t walk_stack(const UnwindModule *modules, size_t nmodules, UnwindRegs r,
                  uint64_t *out, size_t max, Read &&read,
                  WalkStats *stats = nullptr) {
  size_t n = 0;
  if (max == 0 || r.rip == 0)
    return 0;
  out[n++] = r.rip;
  bool first = true;
  const UnwindModule *last = nullptr;
  while (n < max) {
    // A return address points after its call, which may be the last
    // instruction of a function: look the caller up one byte before.
    uint64_t lookup = first ? r.rip : r.rip - 1;
    first = false;
    const CfiRow *row = nullptr;
    // Callers are mostly in the module of their callee: try it first.
    if (!last || lookup < last->lo || lookup >= last->hi) {
      size_t lo = 0, hi = nmodules;
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (modules[mid].lo <= lookup)
          lo = mid + 1;
        else
          hi = mid;
      }
      last = lo > 0 && lookup < modules[lo - 1].hi ? &modules[lo - 1] : nullptr;
    }
    if (last) {
      const CfiRows *t = last->table;
      if (t && t->rows)
        row = find_cfi_row(t->rows, t->count, lookup - last->bias);
    }
    UnwindRegs next;
    if (row && row->cfa == CfaRule::End)
      break;
    if (row && (row->cfa == CfaRule::Rsp || row->cfa == CfaRule::Rbp)) {
      uint64_t base = row->cfa == CfaRule::Rsp ? r.rsp : r.rbp;
      uint64_t cfa = base + static_cast<int64_t>(row->cfa_offset);
      if (!read(&next.rip, cfa - 8, sizeof next.rip))
        break;
      next.rbp = r.rbp;
      if (row->rbp == RbpRule::Offset &&
          !read(&next.rbp, cfa + static_cast<int64_t>(row->rbp_offset),
                sizeof next.rbp))
        break;
      next.rsp = cfa;
      if (stats)
        stats->cfi_steps++;
    } else {
      // No row: the rbp chain, if rbp looks like a frame of this stack.
      if (r.rbp == 0 || (r.rbp & 7) != 0 || r.rbp < r.rsp)
        break;
      uint64_t frame[2];
      if (!read(frame, r.rbp, sizeof frame))
        break;
      next.rbp = frame[0];
      next.rip = frame[1];
      next.rsp = r.rbp + 16;
      if (stats)
        stats->fp_steps++;
    }
    if (next.rip == 0 || next.rsp <= r.rsp)
      break;
    out[n++] = next.rip;
    r = next;
  }
  return n;
}

} // namespace ubtrace::runtime::unwind
