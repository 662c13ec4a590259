// The part of a site the hot path reads: which handlers are bound. Kept
// apart from site.h because the dispatcher is compiled with
// -mgeneral-regs-only, which rules out most of the standard library's
// headers (<atomic> and <string> declare long double functions); the fields
// are accessed with the __atomic builtins instead.
#pragma once

#include "runtime/hook/pt_regs.h"

#include <cstdint>

namespace ubtrace::runtime::hook {

struct HandlerBinding {
  Handler fn;
  void *user;
  bool save_vectors; // the handler may touch vector/x87 state
};

struct SiteBindings {
  // Published with release stores, read with acquire loads; null: none.
  const HandlerBinding *entry = nullptr;
  const HandlerBinding *ret = nullptr;
  // Read by the trampoline on every hit: nonzero makes it save vector state
  // before calling the dispatcher.
  uint64_t save_vectors_on_entry = 0;
  // The function returns twice (vfork, setjmp): its shadow entries stay at
  // their index on every return ("pinned", dispatch.cpp). Set by a return
  // hook's install, never cleared (frames may still be in flight after an
  // uninstall).
  uint64_t returns_twice = 0;
  // The return handler reads the function's entry arguments: the entry
  // keeps them with the shadow entry (the lean path leaves such sites to the
  // full one). Set by a return hook's install or keep_entry_args, never
  // cleared, like returns_twice.
  uint64_t entry_args = 0;
};

inline const HandlerBinding *load_binding(const HandlerBinding *const &slot) {
  return __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
}
inline void store_binding(const HandlerBinding *&slot,
                          const HandlerBinding *binding) {
  __atomic_store_n(&slot, binding, __ATOMIC_RELEASE);
}

// Called by trampolines and the trap handler; defined in dispatch.cpp.
// Returns the return stub (return_stubs.h) the function must return to
// when a return hook armed, else 0; the caller puts it in place.
extern "C" uint64_t ubt_hook_dispatch_entry(PtRegs *regs, SiteBindings *site,
                                            uint64_t vectors_saved);
// The same for a site not at a function's entry on a CPU with XINUSE: the
// vector state is kept here, by moves, when `keep` (the trampoline saved
// none).
extern "C" uint64_t ubt_hook_dispatch_entry_keeping_vectors(PtRegs *regs,
                                                            SiteBindings *site,
                                                            uint64_t keep);
// Returns the real return address.
extern "C" uint64_t ubt_hook_dispatch_return(PtRegs *regs, uint64_t index,
                                             uint64_t vectors_saved);
// A handler run from a signal that interrupted the thread anywhere (a
// profiling timer's): under the same guard as a hook's, so a signal that
// lands while a probe runs on the thread is a nested skip. The kernel has
// saved the vector state. False when it did not run (nested, an excluded
// thread, no hook state left).
extern "C" bool ubt_hook_dispatch_signal(PtRegs *regs, Handler fn, void *user);
// The same from code that saved no vector state: it is saved around the
// run (general-registers-only callers, such as the system call fast path).
extern "C" bool ubt_hook_dispatch_keeping_vectors(PtRegs *regs, Handler fn,
                                                  void *user);

} // namespace ubtrace::runtime::hook
