#include "runtime/hook/trap_handler.h"

#include "runtime/helpers/signal_chain.h"
#include "runtime/hook/pt_regs.h"
#include "runtime/hook/site.h"
#include "runtime/hook/site_bindings.h"
#include "runtime/hook/trap_bytes.h"
#include "runtime/hook/trap_table.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <signal.h>
#include <sys/ucontext.h>

namespace ubtrace::runtime::hook {
namespace {

void on_sigtrap(int sig, siginfo_t *info, void *context);
void on_sigill(int sig, siginfo_t *info, void *context);

// The program's handlers ours chains to (helpers/signal_chain.h).
helpers::ChainedSignal g_trap{SIGTRAP, on_sigtrap};
helpers::ChainedSignal g_ill{SIGILL, on_sigill};

std::atomic<PerfTrapHandler> g_perf_handler{nullptr};

// siginfo_t's perf fields (glibc 2.36 does not name them): sig_data follows
// si_addr in the fault union (the kernel's _sigfault._perf._data).
constexpr int kTrapPerf = 6;
uint64_t perf_sig_data(const siginfo_t *info) {
  uint64_t data;
  std::memcpy(&data,
              reinterpret_cast<const char *>(&info->si_addr) + sizeof(void *),
              sizeof data);
  return data;
}

struct AtomicCounters {
  std::atomic<uint64_t> patching{0}, boundary{0}, trap_site{0}, retried{0},
      foreign{0};
};
AtomicCounters g_counts;

void count(std::atomic<uint64_t> &c) {
  c.fetch_add(1, std::memory_order_relaxed);
}

void from_regs(const PtRegs &r, greg_t *g) {
  g[REG_R15] = r.r15;
  g[REG_R14] = r.r14;
  g[REG_R13] = r.r13;
  g[REG_R12] = r.r12;
  g[REG_RBP] = r.rbp;
  g[REG_RBX] = r.rbx;
  g[REG_R11] = r.r11;
  g[REG_R10] = r.r10;
  g[REG_R9] = r.r9;
  g[REG_R8] = r.r8;
  g[REG_RAX] = r.rax;
  g[REG_RCX] = r.rcx;
  g[REG_RDX] = r.rdx;
  g[REG_RSI] = r.rsi;
  g[REG_RDI] = r.rdi;
  g[REG_EFL] = r.eflags;
}

void run_trap_site(const TrapEntry &e, greg_t *g) {
  Site *site = e.site;
  struct {
    PtRegs regs;
    uint8_t tail[kRegsTailRoom]; // the handler's scratch (pt_regs.h)
  } frame;
  PtRegs &regs = frame.regs;
  regs_from_signal_context(g, regs);
  regs.rip = site->plan.address;
  uint64_t stub = ubt_hook_dispatch_entry(&regs, &site->bindings,
                                          1); // kernel saved vectors
  if (stub) // no launch code from a signal handler: write it over
    *reinterpret_cast<uint64_t *>(regs.rsp) = stub;
  from_regs(regs, g);
  g[REG_RIP] = site->displaced_code;
}

// Handles a trap at `address` if it is ours. by_int3: the signal came
// from an int3 (else from a #UD).
bool handle(uint64_t address, greg_t *g, bool by_int3) {
  const TrapEntry *e = trap_table_find(address);
  if (!e)
    return false;
  bool was_active = e->active.load(std::memory_order_acquire);
  uint8_t now = *reinterpret_cast<volatile const uint8_t *>(address);
  if (now != e->trap_byte) {
    // If what is there now could not have trapped this way, the patch
    // moved on since the trap: run what is there now. Otherwise it is
    // someone else's trap (a debugger's int3 where ours used to be).
    bool could_trap = by_int3 ? now == kInt3 : is_trap_byte(now);
    if (could_trap)
      return false;
    count(g_counts.retried);
    g[REG_RIP] = address;
    return true;
  }
  if (!was_active && !e->active.load(std::memory_order_acquire))
    return false; // our byte value, but not ours any more: someone else's
  switch (e->kind) {
  case TrapKind::Boundary:
    count(g_counts.boundary);
    g[REG_RIP] = e->target;
    return true;
  case TrapKind::SiteEntry:
    if (e->site->plan.mode == PatchMode::Trap) {
      count(g_counts.trap_site);
      run_trap_site(*e, g);
    } else {
      count(g_counts.patching);
      g[REG_RIP] = e->site->trampoline;
    }
    return true;
  }
  return false;
}

void on_sigtrap(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  auto *uc = static_cast<ucontext_t *>(context);
  greg_t *g = uc->uc_mcontext.gregs;
  if (info->si_code == kTrapPerf) {
    const uint64_t data = perf_sig_data(info);
    PerfTrapHandler perf = g_perf_handler.load(std::memory_order_acquire);
    if (perf && data >> 32 == kPerfTrapCookie) {
      perf(data, context);
      errno = saved_errno;
      return;
    }
  }
  // int3 reports SI_KERNEL with rip after the int3.
  bool ours = info->si_code == SI_KERNEL &&
              handle(static_cast<uint64_t>(g[REG_RIP]) - 1, g, true);
  errno = saved_errno;
  if (!ours) {
    count(g_counts.foreign);
    helpers::pass_on(g_trap, info, context, /*fault=*/false);
  }
}

void on_sigill(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  auto *uc = static_cast<ucontext_t *>(context);
  greg_t *g = uc->uc_mcontext.gregs;
  bool ours = (info->si_code == ILL_ILLOPN || info->si_code == ILL_ILLOPC) &&
              handle(static_cast<uint64_t>(g[REG_RIP]), g, false);
  errno = saved_errno;
  if (!ours) {
    count(g_counts.foreign);
    helpers::pass_on(g_ill, info, context, /*fault=*/true);
  }
}

} // namespace

void regs_from_signal_context(const void *gregs, PtRegs &r) {
  const greg_t *g = static_cast<const greg_t *>(gregs);
  r.r15 = g[REG_R15];
  r.r14 = g[REG_R14];
  r.r13 = g[REG_R13];
  r.r12 = g[REG_R12];
  r.rbp = g[REG_RBP];
  r.rbx = g[REG_RBX];
  r.r11 = g[REG_R11];
  r.r10 = g[REG_R10];
  r.r9 = g[REG_R9];
  r.r8 = g[REG_R8];
  r.rax = g[REG_RAX];
  r.rcx = g[REG_RCX];
  r.rdx = g[REG_RDX];
  r.rsi = g[REG_RSI];
  r.rdi = g[REG_RDI];
  r.orig_rax = ~uint64_t{0};
  r.eflags = g[REG_EFL];
  r.rsp = g[REG_RSP];
  uint64_t csgsfs = g[REG_CSGSFS];
  r.cs = csgsfs & 0xFFFF;
  r.ss = (csgsfs >> 48) & 0xFFFF;
  if (!r.ss) // older kernels leave ss out of the signal frame
    r.ss = 0x2B;
  r.rip = g[REG_RIP];
}

TrapCounters trap_counters() {
  TrapCounters c;
  c.patching = g_counts.patching.load();
  c.boundary = g_counts.boundary.load();
  c.trap_site = g_counts.trap_site.load();
  c.retried = g_counts.retried.load();
  c.foreign = g_counts.foreign.load();
  return c;
}

Result<void> install_trap_handlers() {
  Result<void> r = helpers::install_first(g_trap);
  if (!r)
    return r;
  return helpers::install_first(g_ill);
}

void dispatch_in_signal(const void *ucontext, Handler fn, void *user) {
  const auto *uc = static_cast<const ucontext_t *>(ucontext);
  struct {
    PtRegs regs;
    uint8_t tail[kRegsTailRoom]; // the probe's context
  } frame;
  regs_from_signal_context(uc->uc_mcontext.gregs, frame.regs);
  ubt_hook_dispatch_signal(&frame.regs, fn, user);
}

void set_perf_trap_handler(PerfTrapHandler handler) {
  g_perf_handler.store(handler, std::memory_order_release);
}

bool filter_trap_sigaction(int sig, const struct sigaction *act,
                           struct sigaction *old) {
  helpers::ChainedSignal *s = sig == SIGTRAP  ? &g_trap
                              : sig == SIGILL ? &g_ill
                                              : nullptr;
  return s && helpers::filter_sigaction(*s, act, old);
}

} // namespace ubtrace::runtime::hook
