// The entry of rewritten system call sites (syscalls.h): runs where the
// program's `syscall` instruction was, with its registers in a pt_regs
// frame. Built with -mgeneral-regs-only and -fno-builtin: nothing here may
// touch the vector registers the program keeps across the call, or call
// a libc function that may be probed. No lock, no allocation.
#include "runtime/agent/syscalls_state.h"
#include "runtime/helpers/thread_id_reset.h"
#include "runtime/hook/site_bindings.h"

#include <cerrno>
#include <sys/syscall.h>

extern "C" void ubt_syscalls_child(); // syscalls.cpp

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

// The calling thread's selector when its calls are traced now, else null.
volatile char *traced_selector() {
  if (!is_active())
    return nullptr;
  int32_t tid = t_tid;
  if (tid <= 0 || static_cast<size_t>(tid) >= kMaxTid || !g_enabled[tid])
    return nullptr;
  if (g_tid_offset >= 0) {
    uint64_t self;
    __asm__("mov %%fs:0x10, %0" : "=r"(self));
    if (*reinterpret_cast<const volatile int32_t *>(self + g_tid_offset) != tid)
      return nullptr; // a vfork child, or its parent after it: the handler
                      // knows
  }
  volatile char *selector = selector_of(tid);
  if (*selector != kBlock)
    return nullptr; // the agent's own code, or tracing stopped: not traced
  return selector;
}

template <bool kKeepVectors> void fast(runtime::hook::PtRegs *r) {
  r->rcx = 1; // the trampoline runs the instruction itself
  volatile char *selector = traced_selector();
  if (!selector)
    return;
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

// Whether the child of clone-family call `nr` may run probes: not one
// made with CLONE_VM but neither a TLS of its own nor CLONE_VFORK, which
// runs beside its parent on the parent's TLS (the probes' per-thread
// state). A fresh TLS has t_tid still 0. clone3's flags are read from its
// arguments, which may be gone only in the case refused anyway (the
// parent runs on; a vfork parent waits, a fork child has its own copy).
bool child_may_probe(int nr, const runtime::hook::PtRegs *r) {
  if (t_tid == 0 || nr == SYS_fork || nr == SYS_vfork)
    return true;
  uint64_t flags = 0;
  if (nr == SYS_clone)
    flags = r->rdi;
  else if (nr == SYS_clone3 && r->rdi)
    flags = *reinterpret_cast<const volatile uint64_t *>(r->rdi);
  constexpr uint64_t kVm = 0x100, kVfork = 0x4000, kSetTls = 0x80000;
  return !(flags & kVm) || (flags & (kVfork | kSetTls));
}

// A clone-family call's return, in the parent and in the child
// (syscalls.cpp's stubs): dispatch on in the child, then the exit probes.
// The thread's id is asked of the kernel: a vfork child may have written
// its own into the TLS it shares with its parent.
void clone_return(runtime::hook::PtRegs *r) {
  // A vfork child runs on its parent's TLS, where the probes' helpers keep
  // the parent's id: both sides ask the kernel at their next look.
  runtime::helpers::forget_thread_id();
  int nr = static_cast<int>(r->orig_rax);
  if (r->rax == 0) {
    bool may = child_may_probe(nr, r);
    ubt_syscalls_child();
    if (!may) {
      if (is_active() && wanted(nr, true))
        __atomic_fetch_add(&g_child_exits_unseen, 1, __ATOMIC_RELAXED);
      return;
    }
  }
  if (!is_active() || !wanted(nr, true))
    return;
  long tid = g_raw(SYS_gettid, 0, 0, 0, 0, 0, 0);
  if (tid <= 0 || static_cast<size_t>(tid) >= kMaxTid || !g_enabled[tid])
    return;
  t_tid = static_cast<int32_t>(tid);
  volatile char *selector = selector_of(static_cast<int32_t>(tid));
  if (*selector != kBlock)
    return;
  uint64_t rc = r->rax;
  probe<true>(r, selector, nr, true);
  r->rax = rc;
}

} // namespace

} // namespace ubtrace::agent::syscalls::state

namespace ubtrace::agent::syscalls {

void answered(int nr, const long args[6], long result) {
  using namespace state;
  volatile char *selector = traced_selector();
  if (!selector || (!wanted(nr, false) && !wanted(nr, true)))
    return;
  struct {
    runtime::hook::PtRegs regs;
    uint8_t tail[runtime::hook::kRegsTailRoom]; // the probe's context
  } frame;
  runtime::hook::PtRegs *r = &frame.regs;
  // No memset: a probe may sit on it.
  auto *word = reinterpret_cast<volatile uint64_t *>(r);
  for (size_t i = 0; i < sizeof *r / 8; i++)
    word[i] = 0;
  // Where the call is answered, for ustack: this frame, whose callers the
  // unwinder walks back to the program's.
  __asm__ volatile("lea 0(%%rip), %0" : "=r"(r->rip));
  __asm__ volatile("mov %%rsp, %0" : "=r"(r->rsp));
  __asm__ volatile("mov %%rbp, %0" : "=r"(r->rbp));
  r->rdi = static_cast<uint64_t>(args[0]);
  r->rsi = static_cast<uint64_t>(args[1]);
  r->rdx = static_cast<uint64_t>(args[2]);
  r->r10 = static_cast<uint64_t>(args[3]);
  r->r8 = static_cast<uint64_t>(args[4]);
  r->r9 = static_cast<uint64_t>(args[5]);
  r->orig_rax = static_cast<uint64_t>(nr);
  if (wanted(nr, false)) {
    r->rax = static_cast<uint64_t>(-ENOSYS);
    probe<false>(r, selector, nr, false);
  }
  if (wanted(nr, true)) {
    r->orig_rax = static_cast<uint64_t>(nr);
    r->rax = static_cast<uint64_t>(result);
    probe<false>(r, selector, nr, true);
  }
}

} // namespace ubtrace::agent::syscalls

extern "C" void ubt_syscalls_fast(ubtrace::runtime::hook::PtRegs *r) {
  ubtrace::agent::syscalls::state::fast<true>(r);
}

extern "C" void ubt_syscalls_fast_abi(ubtrace::runtime::hook::PtRegs *r) {
  ubtrace::agent::syscalls::state::fast<false>(r);
}

extern "C" __attribute__((visibility("hidden"))) void
ubt_syscalls_clone_return(ubtrace::runtime::hook::PtRegs *r) {
  ubtrace::agent::syscalls::state::clone_return(r);
}

// libc's rewritten clone sites in sessions without system call probes
// (clone_sites.h): the call runs in the trampoline.
extern "C" __attribute__((visibility("hidden"))) void
ubt_clone_site_entry(ubtrace::runtime::hook::PtRegs *r) {
  r->rcx = 1;
}
