#include "runtime/hook/trap_handler.h"

#include "runtime/hook/pt_regs.h"
#include "runtime/hook/site.h"
#include "runtime/hook/trap_bytes.h"
#include "runtime/hook/trap_table.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <signal.h>
#include <string>
#include <sys/ucontext.h>

namespace ubtrace::runtime::hook {
namespace {

// The handler ours chains to, per signal: set when ours goes in, and when
// the program asks for another one later (filter_trap_sigaction). Read by
// the handlers, so each change publishes a fresh copy (never freed: a
// handler may be reading an old one; programs set these a few times).
struct Previous {
  std::atomic<const struct sigaction *> action{nullptr};
  std::atomic<bool> installed{false}; // ours is the process's handler
};
Previous g_previous_trap;
Previous g_previous_ill;

void publish(Previous &prev, const struct sigaction &action) {
  prev.action.store(new struct sigaction(action), std::memory_order_release);
}

struct AtomicCounters {
  std::atomic<uint64_t> patching{0}, boundary{0}, trap_site{0}, retried{0},
      foreign{0};
};
AtomicCounters g_counts;

void count(std::atomic<uint64_t> &c) {
  c.fetch_add(1, std::memory_order_relaxed);
}

void to_regs(const greg_t *g, PtRegs &r) {
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
  to_regs(g, regs);
  if (!(regs.ss)) // older kernels leave ss out of the signal frame
    regs.ss = 0x2B;
  regs.rip = site->plan.address;
  uint64_t stub =
      ubt_hook_dispatch_entry(&regs, &site->bindings, 1); // kernel saved vectors
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

void chain(int sig, siginfo_t *info, void *context, const Previous &prev) {
  const struct sigaction *action = prev.action.load(std::memory_order_acquire);
  if (action && (action->sa_flags & SA_SIGINFO) && action->sa_sigaction) {
    action->sa_sigaction(sig, info, context);
    return;
  }
  if (action && action->sa_handler != SIG_DFL &&
      action->sa_handler != SIG_IGN) {
    action->sa_handler(sig);
    return;
  }
  if (action && action->sa_handler == SIG_IGN && sig == SIGTRAP)
    return; // an ignored int3 just continues
  // The default action, as if we were not here: dies with a core dump.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

void on_sigtrap(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  auto *uc = static_cast<ucontext_t *>(context);
  greg_t *g = uc->uc_mcontext.gregs;
  // int3 reports SI_KERNEL with rip after the int3.
  bool ours = info->si_code == SI_KERNEL &&
              handle(static_cast<uint64_t>(g[REG_RIP]) - 1, g, true);
  errno = saved_errno;
  if (!ours) {
    count(g_counts.foreign);
    chain(sig, info, context, g_previous_trap);
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
    chain(sig, info, context, g_previous_ill);
  }
}

Result<void> install_one(int sig, void (*fn)(int, siginfo_t *, void *),
                         Previous &prev) {
  struct sigaction current;
  if (sigaction(sig, nullptr, &current) != 0)
    return make_error(std::string("sigaction: ") + strerror(errno));
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == fn)
    return {};
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = fn;
  sigemptyset(&ours.sa_mask);
  // NODEFER: a handler run from the trap path may hit another trap.
  ours.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | SA_ONSTACK;
  publish(prev, current); // before ours runs: it may chain at once
  if (sigaction(sig, &ours, nullptr) != 0)
    return make_error(std::string("sigaction: ") + strerror(errno));
  prev.installed.store(true, std::memory_order_release);
  return {};
}

bool is_ours(const struct sigaction &action) {
  return (action.sa_flags & SA_SIGINFO) &&
         (action.sa_sigaction == on_sigtrap || action.sa_sigaction == on_sigill);
}

} // namespace

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
  Result<void> r = install_one(SIGTRAP, on_sigtrap, g_previous_trap);
  if (!r)
    return r;
  return install_one(SIGILL, on_sigill, g_previous_ill);
}

bool filter_trap_sigaction(int sig, const struct sigaction *act,
                           struct sigaction *old) {
  Previous *prev = sig == SIGTRAP  ? &g_previous_trap
                   : sig == SIGILL ? &g_previous_ill
                                   : nullptr;
  if (!prev || !prev->installed.load(std::memory_order_acquire))
    return false;
  // Ours (a re-install) and the default action (chain() dying as if we
  // were not here) go to the kernel.
  if (act && (is_ours(*act) || (!(act->sa_flags & SA_SIGINFO) &&
                                act->sa_handler == SIG_DFL)))
    return false;
  if (old) {
    const struct sigaction *current =
        prev->action.load(std::memory_order_acquire);
    if (current) {
      *old = *current;
    } else {
      memset(old, 0, sizeof *old);
      old->sa_handler = SIG_DFL;
    }
  }
  if (act)
    publish(*prev, *act);
  return true;
}

} // namespace ubtrace::runtime::hook
