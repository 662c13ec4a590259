// A hooked address: its plan, its trampoline, the bytes it patches and the
// handlers bound to it. Sites are created at the first install on an
// address and live as long as the process (threads may still be inside
// their trampolines); a later install on the same address reuses the site.
#pragma once

#include "runtime/hook/planner.h"
#include "runtime/hook/site_bindings.h"

#include <cstdint>

namespace ubtrace::runtime::hook {

struct Site {
  SiteBindings bindings;
  PatchPlan plan;
  // Jump: the trampoline's first byte. Trap: 0.
  uint64_t trampoline = 0;
  // The relocated copy of the displaced instructions (inside the trampoline
  // for Jump, out of line for Trap); starts[i] is instruction i's offset.
  uint64_t displaced_code = 0;
  uint32_t starts[kMaxDisplaced] = {};
  // The bytes from patch_start: as found, and as patched.
  uint32_t patch_len = 0;
  uint8_t original[24] = {}; // up to 4 + 15 displaced bytes
  uint8_t patched[24] = {};
  bool attached = false;
  // The trampoline starts with the lean return entry (trampoline.h): the
  // site was made for a return hook. Sites made for an entry hook do without
  // (measured: its checks cost entry hooks several ns in some layouts).
  bool lean_return_entry = false;
  // A rewritten `syscall` instruction (install_syscall_site, hook.h): the
  // trampoline calls this instead of a dispatcher. 0 for hook sites.
  uint64_t syscall_entry = 0;
  uint64_t syscall_slow = 0;    // the table of calls the entry must see
  uint64_t syscall_direct = 0;  // `syscall; ret` for the others
  uint64_t syscall_address = 0; // the instruction, inside the patch
  int64_t syscall_tls_word = 0; // zeroed after it (SyscallPath)
};

} // namespace ubtrace::runtime::hook
