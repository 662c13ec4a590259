#include "runtime/helpers/signal_chain.h"

#include "runtime/probe_safe.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/syscall.h>
#include <sys/ucontext.h>

namespace ubtrace::runtime::helpers {
namespace {

// The kernel's struct sigaction (rt_sigaction), not glibc's.
struct KernelSigaction {
  void *handler;
  unsigned long flags;
  void *restorer;
  uint64_t mask;
};

// rt_sigreturn, as glibc's __restore_rt (unwinders recognise the bytes),
// for the handlers ensure_first installs without libc.
extern "C" void ubt_restore_rt();
__asm__(R"(
  .text
  .p2align 4
  .hidden ubt_restore_rt
  .globl ubt_restore_rt
  .type ubt_restore_rt, @function
ubt_restore_rt:
  movq $15, %rax
  syscall
  .size ubt_restore_rt, .-ubt_restore_rt
)");

constexpr unsigned long kSaRestorer = 0x04000000;
constexpr unsigned long kOurFlags =
    SA_SIGINFO | SA_NODEFER | SA_RESTART | SA_ONSTACK;

// Records of the program's handlers: from a static pool (publishing runs in
// signal handlers and on the probe path), reused only after kRecords later
// changes (a handler may still be reading an old one; programs set these a
// few times).
constexpr int kRecords = 256;
struct sigaction g_records[kRecords];
std::atomic<int> g_next_record{0};

uint64_t bit(int sig) {
  return uint64_t{1} << (sig - 1);
}

// The first 64 signals of a glibc sigset_t, as the kernel takes them.
uint64_t low_word(const sigset_t &set) {
  uint64_t w;
  probe_safe::copy_bytes(&w, &set, sizeof w);
  return w;
}

void publish(ChainedSignal &s, const struct sigaction &action) {
  int i = g_next_record.fetch_add(1, std::memory_order_relaxed);
  struct sigaction *record = &g_records[static_cast<unsigned>(i) % kRecords];
  probe_safe::copy_bytes(record, &action, sizeof action);
  s.previous.store(record, std::memory_order_release);
}

bool is_ours(const ChainedSignal &s, const struct sigaction &action) {
  return (action.sa_flags & SA_SIGINFO) && action.sa_sigaction == s.ours;
}

unsigned long our_flags(const ChainedSignal &s) {
  return s.onstack ? kOurFlags
                   : kOurFlags & ~static_cast<unsigned long>(SA_ONSTACK);
}

// The rt_sigreturn code every handler of ours returns through when it has
// none of its own (set_shared_restorer), and the signals ours is on.
std::atomic<void (*)()> g_shared_restorer{nullptr};
constexpr int kMaxChains = 16;
std::atomic<ChainedSignal *> g_chains[kMaxChains];

void (*restorer_of(const ChainedSignal &s))() {
  return s.restorer ? s.restorer
                    : g_shared_restorer.load(std::memory_order_acquire);
}

void remember(ChainedSignal &s) {
  for (auto &slot : g_chains) {
    ChainedSignal *seen = slot.load(std::memory_order_acquire);
    if (seen == &s)
      return;
    if (!seen && slot.compare_exchange_strong(seen, &s))
      return;
  }
}

bool has_function(const struct sigaction &a) {
  if (a.sa_flags & SA_SIGINFO)
    return a.sa_sigaction != nullptr;
  return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

void take_default(int sig) {
  struct sigaction dfl;
  probe_safe::fill_bytes(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
}

} // namespace

Result<void> install_first(ChainedSignal &s) {
  KernelSigaction current{};
  long rc = probe_safe::raw_syscall(SYS_rt_sigaction, s.sig, 0,
                                    reinterpret_cast<long>(&current), 8);
  if (rc != 0)
    return make_error(std::string("sigaction: ") +
                      strerror(static_cast<int>(-rc)));
  if ((current.flags & SA_SIGINFO) &&
      current.handler == reinterpret_cast<void *>(s.ours))
    return {};
  struct sigaction previous;
  if (sigaction(s.sig, nullptr, &previous) != 0)
    return make_error(std::string("sigaction: ") + strerror(errno));
  // With the preload, the query above answers with the program's chained
  // handler (ours was installed before and replaced through the kernel
  // since): either is what ours must chain to.
  struct sigaction ours;
  probe_safe::fill_bytes(&ours, 0, sizeof ours);
  ours.sa_sigaction = s.ours;
  sigemptyset(&ours.sa_mask);
  // NODEFER: a handler run from a trap may hit another trap, and a
  // fault-safe read may run inside a handler of ours. ONSTACK: a stack
  // overflow must still reach the program's handler on its altstack.
  ours.sa_flags = static_cast<int>(our_flags(s));
  publish(s, previous); // before ours runs: it may chain at once
  remember(s);
  if (void (*restorer)() = restorer_of(s)) {
    KernelSigaction raw{reinterpret_cast<void *>(s.ours),
                        our_flags(s) | kSaRestorer,
                        reinterpret_cast<void *>(restorer), 0};
    long rc = probe_safe::raw_syscall(SYS_rt_sigaction, s.sig,
                                      reinterpret_cast<long>(&raw), 0, 8);
    if (rc != 0)
      return make_error(std::string("sigaction: ") +
                        strerror(static_cast<int>(-rc)));
  } else if (sigaction(s.sig, &ours, nullptr) != 0) {
    return make_error(std::string("sigaction: ") + strerror(errno));
  }
  s.installed.store(true, std::memory_order_release);
  return {};
}

void set_shared_restorer(void (*restorer)()) {
  g_shared_restorer.store(restorer, std::memory_order_release);
  for (auto &slot : g_chains) {
    ChainedSignal *s = slot.load(std::memory_order_acquire);
    if (!s || s->restorer)
      continue;
    KernelSigaction current{};
    if (probe_safe::raw_syscall(SYS_rt_sigaction, s->sig, 0,
                                reinterpret_cast<long>(&current), 8) != 0 ||
        !(current.flags & SA_SIGINFO) ||
        current.handler != reinterpret_cast<void *>(s->ours))
      continue; // not ours now: ensure_first puts ours back with it
    KernelSigaction ours{
        reinterpret_cast<void *>(s->ours), our_flags(*s) | kSaRestorer,
        reinterpret_cast<void *>(restorer ? restorer : &ubt_restore_rt),
        current.mask};
    probe_safe::raw_syscall(SYS_rt_sigaction, s->sig,
                            reinterpret_cast<long>(&ours), 0, 8);
  }
}

bool filter_sigaction(ChainedSignal &s, const struct sigaction *act,
                      struct sigaction *old) {
  if (!s.installed.load(std::memory_order_acquire))
    return false;
  // Ours (a re-install) and the default action (pass_on dying as if we
  // were not here) go to the kernel.
  if (act && (is_ours(s, *act) ||
              (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL)))
    return false;
  if (old) {
    const struct sigaction *current =
        s.previous.load(std::memory_order_acquire);
    if (current) {
      *old = *current;
    } else {
      probe_safe::fill_bytes(old, 0, sizeof *old);
      old->sa_handler = SIG_DFL;
    }
  }
  if (act)
    publish(s, *act);
  return true;
}

bool ensure_first(ChainedSignal &s) {
  KernelSigaction current{};
  if (probe_safe::raw_syscall(SYS_rt_sigaction, s.sig, 0,
                              reinterpret_cast<long>(&current), 8) != 0)
    return false;
  if ((current.flags & SA_SIGINFO) &&
      current.handler == reinterpret_cast<void *>(s.ours))
    return true;
  // The program's handler, as sigaction() would have reported it.
  struct sigaction theirs;
  probe_safe::fill_bytes(&theirs, 0, sizeof theirs);
  theirs.sa_handler = reinterpret_cast<void (*)(int)>(current.handler);
  theirs.sa_flags = static_cast<int>(current.flags);
  probe_safe::copy_bytes(&theirs.sa_mask, &current.mask, sizeof current.mask);
  publish(s, theirs);
  KernelSigaction ours{reinterpret_cast<void *>(s.ours),
                       our_flags(s) | kSaRestorer,
                       reinterpret_cast<void *>(
                           restorer_of(s) ? restorer_of(s) : &ubt_restore_rt),
                       0};
  return probe_safe::raw_syscall(SYS_rt_sigaction, s.sig,
                                 reinterpret_cast<long>(&ours), 0, 8) == 0;
}

void pass_on(ChainedSignal &s, siginfo_t *info, void *context, bool fault) {
  const int sig = s.sig;
  const struct sigaction *a = s.previous.load(std::memory_order_acquire);
  if (a && has_function(*a)) {
    // What the kernel blocks while the program's handler runs; it restores
    // the interrupted mask (the context's) when the handler returns.
    auto *uc = static_cast<ucontext_t *>(context);
    uint64_t mask = low_word(uc->uc_sigmask) | low_word(a->sa_mask);
    if (!(a->sa_flags & SA_NODEFER))
      mask |= bit(sig);
    mask &= ~(bit(SIGKILL) | bit(SIGSTOP));
    probe_safe::raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK,
                            reinterpret_cast<long>(&mask), 0, 8);
    struct sigaction run = *a;
    if (a->sa_flags & SA_RESETHAND) {
      struct sigaction dfl;
      probe_safe::fill_bytes(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      publish(s, dfl);
    }
    if (run.sa_flags & SA_SIGINFO)
      run.sa_sigaction(sig, info, context);
    else
      run.sa_handler(sig);
    return;
  }
  if (!fault && a && a->sa_handler == SIG_IGN)
    return; // an ignored int3 just continues
  // The default action, as if we were not here: a fault happens again at
  // the faulting instruction; anything else is raised again.
  take_default(sig);
  if (fault && info->si_code > 0)
    return;
  raise(sig);
}

} // namespace ubtrace::runtime::helpers
