// Writing a site's patch over code that other threads may be running, and
// taking it out again.
//
// Atomic patches. A Jump patch that lies within one naturally aligned
// 16-byte block (most function entries: functions start 16-byte aligned)
// goes in and out with one LOCK CMPXCHG16B of that block, then sync: an
// instruction fetch of an aligned block sees all old or all new bytes (the
// reasoning of hot-patching on Windows), so no thread ever meets a
// transient int3 at the patch address. The trap bytes at former
// instruction starts stay, for threads that were between the displaced
// instructions at that instant.
//
// Otherwise, the int3-first protocol (after the Linux kernel's
// text_poke_bp, extended to patches that cover several instructions);
// "sync" is sync_cores():
//   attach: int3 at P, sync; the patch bytes at the other instruction
//           starts (each a trap byte by construction), sync; the remaining
//           bytes, sync; the jump's first byte, sync.
//   detach: int3 at P, sync; the bytes that are not instruction starts,
//           sync; the instruction starts, sync; the first byte, sync.
// At every moment, a thread fetching at P or at an instruction start of
// either image finds either a trap byte (the trap handler sends it to the
// trampoline or to the relocated instruction) or a complete, consistent
// instruction: single-byte stores are atomic for instruction fetch, and
// bytes that are not instruction starts are never fetched first. A thread
// stopped inside the displaced range when the patch went in resumes on a
// trap byte; one inside the trampoline when the patch is removed finishes
// it and jumps back to the original code at an instruction start.
//
// Code pages are made writable (keeping their execute permission, so
// threads running elsewhere in the page are not disturbed) only for the
// duration, and get their exact previous protection back; pages that were
// already writable are left alone.
#pragma once

#include "runtime/hook/memory_map.h"
#include "runtime/hook/site.h"
#include "runtime/result.h"

namespace ubtrace::runtime::hook {

// Whether the site's patch goes in and out in one atomic store (above).
bool patches_atomically(const Site &site);

Result<void> attach_patch(Site &site, const MemoryMap &map);

// Patches written in or out so far: atomically, and int3-first.
struct PatchCounts {
  uint64_t atomic = 0;
  uint64_t int3_first = 0;
};
PatchCounts patch_counts(); // installer, under its lock

// (Code no longer mapped in `map` is forgotten instead: forget_patch.)
Result<void> detach_patch(Site &site, const MemoryMap &map);
// The patched code is gone (unmapped, or replaced by a new mapping): the
// site counts as detached and its traps as not ours, without a byte
// written or read.
void forget_patch(Site &site);

} // namespace ubtrace::runtime::hook
