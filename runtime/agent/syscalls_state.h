// What the two paths of system call probes share (syscalls.h): the
// dispatch handler (syscalls.cpp, every call of the process as a SIGSYS)
// and the rewritten sites' entry (syscall_fast.cpp, a call at a site whose
// `syscall` instruction was rewritten into a jump). Internal to them.
#pragma once

#include "runtime/hook/pt_regs.h"

#include <cstddef>
#include <cstdint>
#include <sys/syscall.h>

namespace ubtrace::agent::syscalls::state {

inline constexpr char kAllow = 0;          // SYSCALL_DISPATCH_FILTER_ALLOW
inline constexpr char kBlock = 1;          // SYSCALL_DISPATCH_FILTER_BLOCK
inline constexpr size_t kMaxTid = 4194304; // PID_MAX_LIMIT on 64-bit
inline constexpr int kMaxNr = 1024;

// What the dispatch handler must do itself (syscalls.cpp): calls that
// cannot return through a rewritten site's frame, and calls it adjusts.
// Their sites' calls go raw, where dispatch catches them; both paths read
// this one list.
inline constexpr int kDispatchOnly[] = {
    SYS_rt_sigreturn,   SYS_clone,        SYS_clone3,  SYS_fork, SYS_vfork,
    SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_seccomp, SYS_prctl};

inline constexpr bool dispatch_only(int nr) {
  for (int x : kDispatchOnly)
    if (x == nr)
      return true;
  return false;
}

// Read and written with __atomic builtins (<atomic> does not build with
// general registers only).
extern bool g_active;
extern char *g_selector; // [tid]
extern char *g_enabled;  // [tid]: dispatch turned on by this thread
// A system call made from the exempt range: never dispatched.
using RawSyscall = long (*)(long, long, long, long, long, long, long);
extern RawSyscall g_raw;
extern uint64_t g_want[2][kMaxNr / 64];
// Children whose exit probes could not run (syscall_fast.cpp).
extern uint64_t g_child_exits_unseen;
extern bool g_want_all[2];
// glibc's thread id field, from its thread pointer (-1: unknown).
extern long g_tid_offset;
// The thread id this thread turned dispatch on with (enable_self), so the
// fast path needs no gettid. A vfork child writes its own into the
// parent's TLS: the fast path checks it against glibc's field and leaves
// a mismatch to the dispatch handler, which sets it right.
extern __thread int32_t t_tid __attribute__((tls_model("initial-exec")));

inline bool is_active() {
  return __atomic_load_n(&g_active, __ATOMIC_ACQUIRE);
}

inline bool wanted(int nr, bool exit) {
  if (__atomic_load_n(&g_want_all[exit], __ATOMIC_RELAXED))
    return true;
  return nr >= 0 && nr < kMaxNr &&
         (__atomic_load_n(&g_want[exit][nr / 64], __ATOMIC_RELAXED) >>
          (nr % 64)) &
             1;
}

// The probes of a call, run under the hooks' dispatch guard.
struct Event {
  int nr;
  bool exit;
};
void run_probes(runtime::hook::PtRegs *regs, void *event);

} // namespace ubtrace::agent::syscalls::state

// The rewritten sites' entry (runtime/hook/hook.h, install_syscall_site).
// Built with general registers only: the vector state the program keeps
// across the call is saved only around the probes.
extern "C" void ubt_syscalls_fast(ubtrace::runtime::hook::PtRegs *regs);
// The same without saving it, for a site inside a function that touches no
// vector register and is only called as the ABI says (libc's wrappers):
// no vector value can be live there. Saving costs more than the rest of
// the probed call on some machines (bench/RESULTS.md).
extern "C" void ubt_syscalls_fast_abi(ubtrace::runtime::hook::PtRegs *regs);
