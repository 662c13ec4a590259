// The entry of rewritten system call sites (syscalls.h): runs where the
// program's `syscall` instruction was, with its registers in a pt_regs
// frame. Built with -mgeneral-regs-only and -fno-builtin: nothing here may
// touch the vector registers the program keeps across the call, or call
// a libc function that may be probed. No lock, no allocation.
#include "runtime/agent/syscalls_state.h"
#include "runtime/hook/site_bindings.h"

#include <cerrno>
#include <sys/syscall.h>

namespace ubtrace::agent::syscalls::state {

__thread int32_t t_tid __attribute__((tls_model("initial-exec"))) = 0;

namespace {

volatile char *selector_of(int32_t tid) {
  return reinterpret_cast<volatile char *>(&g_selector[tid]);
}

// The thread's selector is at ALLOW while the agent's code runs (its
// system calls are not the program's), at BLOCK while the program's call
// runs (a signal handler of the program that runs meanwhile is traced).
template <bool kKeepVectors>
void probe(runtime::hook::PtRegs *r, volatile char *selector, int nr,
           bool exit) {
  *selector = kAllow;
  Event e{nr, exit};
  if (kKeepVectors)
    runtime::hook::ubt_hook_dispatch_keeping_vectors(r, run_probes, &e);
  else
    runtime::hook::ubt_hook_dispatch_signal(r, run_probes, &e);
  *selector = kBlock;
}

template <bool kKeepVectors> void fast(runtime::hook::PtRegs *r) {
  r->rcx = 1; // the trampoline runs the instruction itself
  if (!is_active())
    return;
  int32_t tid = t_tid;
  if (tid <= 0 || static_cast<size_t>(tid) >= kMaxTid || !g_enabled[tid])
    return;
  if (g_tid_offset >= 0) {
    uint64_t self;
    __asm__("mov %%fs:0x10, %0" : "=r"(self));
    if (*reinterpret_cast<const volatile int32_t *>(self + g_tid_offset) != tid)
      return; // a vfork child, or its parent after it: the handler knows
  }
  volatile char *selector = selector_of(tid);
  if (*selector != kBlock)
    return; // the agent's own code, or tracing stopped: not traced
  int nr = static_cast<int>(r->rax);
  if (dispatch_only(nr))
    return; // the instruction runs in the trampoline, under dispatch
  long a[6] = {static_cast<long>(r->rdi), static_cast<long>(r->rsi),
               static_cast<long>(r->rdx), static_cast<long>(r->r10),
               static_cast<long>(r->r8),  static_cast<long>(r->r9)};
  if (wanted(nr, false)) {
    r->orig_rax = static_cast<uint64_t>(nr);
    r->rax = static_cast<uint64_t>(-ENOSYS);
    probe<kKeepVectors>(r, selector, nr, false);
  }
  long rc = g_raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  r->rax = static_cast<uint64_t>(rc);
  r->rcx = 0;
  r->r11 = r->eflags; // what the kernel leaves there
  if (wanted(nr, true)) {
    r->orig_rax = static_cast<uint64_t>(nr);
    probe<kKeepVectors>(r, selector, nr, true);
    r->rax = static_cast<uint64_t>(rc);
    r->rcx = 0;
  }
}

} // namespace
} // namespace ubtrace::agent::syscalls::state

extern "C" void ubt_syscalls_fast(ubtrace::runtime::hook::PtRegs *r) {
  ubtrace::agent::syscalls::state::fast<true>(r);
}

extern "C" void ubt_syscalls_fast_abi(ubtrace::runtime::hook::PtRegs *r) {
  ubtrace::agent::syscalls::state::fast<false>(r);
}
