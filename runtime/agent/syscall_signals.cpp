// The program's signal handlers while system call probes run
// (syscall_signals.h). Runs in signal handlers and in the dispatch
// handler: no libc call, no allocation; system calls from the exempt
// range.
#include "runtime/agent/syscall_signals.h"

#include "runtime/agent/syscalls_state.h"
#include "runtime/helpers/safe_copy.h"

#include <cerrno>
#include <csignal>
#include <sys/syscall.h>

// The kernel's handler for every wrapped signal.
extern "C" void ubt_program_signal(int sig, siginfo_t *info, void *uc);

namespace ubtrace::agent::syscalls::signals {
namespace {

using namespace state;

constexpr int kSignals = 64;
constexpr uint64_t kSaSiginfo = 0x4;            // SA_SIGINFO
constexpr uint64_t kSaResethand = 0x80000000;   // SA_RESETHAND
constexpr int kSigCancel = 32, kSigSetxid = 33; // glibc's own

// The program's action for each signal whose kernel handler is ours.
// Written under g_lock; read by ubt_program_signal without it (a handler
// the program replaces while its signal is being delivered may run once
// more, as the kernel's own race allows).
KernelAction g_action[kSignals + 1];
bool g_wrapped[kSignals + 1];
uint64_t g_agent_lo = 0, g_agent_hi = 0;
// The tid holding it (0: free): a signal whose handler changes actions
// while its thread holds it passes through unwrapped.
int32_t g_lock = 0;

long raw(long nr, long a = 0, long b = 0, long c = 0, long d = 0) {
  return g_raw(nr, a, b, c, d, 0, 0);
}

bool lock() {
  auto me = static_cast<int32_t>(raw(SYS_gettid));
  int32_t free = 0;
  while (!__atomic_compare_exchange_n(&g_lock, &free, me, false,
                                      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    if (free == me)
      return false;
    free = 0;
    __builtin_ia32_pause();
  }
  return true;
}

void unlock() {
  __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE);
}

bool wrappable(int sig, const KernelAction &a) {
  if (sig < 1 || sig > kSignals || sig == SIGKILL || sig == SIGSTOP ||
      sig == SIGSYS || sig == SIGTRAP || sig == SIGILL || sig == SIGSEGV ||
      sig == SIGBUS || sig == kSigCancel || sig == kSigSetxid)
    return false;
  if (a.handler <= 1) // SIG_DFL, SIG_IGN
    return false;
  return !(a.handler >= g_agent_lo && a.handler < g_agent_hi);
}

// What the kernel gets for the program's `a`: our entry, with its flags
// (and SA_SIGINFO), mask and restorer.
KernelAction ours(const KernelAction &a) {
  KernelAction k = a;
  k.handler = reinterpret_cast<uint64_t>(&ubt_program_signal);
  k.flags |= kSaSiginfo;
  return k;
}

bool is_ours(const KernelAction &k) {
  return k.handler == reinterpret_cast<uint64_t>(&ubt_program_signal);
}

long kernel_action(int sig, const KernelAction *act, KernelAction *old) {
  return raw(SYS_rt_sigaction, sig, reinterpret_cast<long>(act),
             reinterpret_cast<long>(old), 8);
}

// Under g_lock: the kernel's action for `sig` becomes ours for the
// program's `a`, or `a` itself when it is not to be wrapped.
long set_program_action(int sig, const KernelAction &a, KernelAction *old) {
  if (!is_active() || !wrappable(sig, a)) {
    long rc = kernel_action(sig, &a, old);
    if (rc == 0)
      g_wrapped[sig] = false;
    return rc;
  }
  g_action[sig] = a;
  KernelAction k = ours(a);
  long rc = kernel_action(sig, &k, old);
  if (rc == 0)
    g_wrapped[sig] = true;
  return rc;
}

} // namespace

void wrap_all(uint64_t agent_lo, uint64_t agent_hi) {
  g_agent_lo = agent_lo;
  g_agent_hi = agent_hi;
  if (!lock())
    return;
  for (int sig = 1; sig <= kSignals; sig++) {
    KernelAction now{};
    if (kernel_action(sig, nullptr, &now) != 0 || is_ours(now) ||
        !wrappable(sig, now))
      continue;
    (void)set_program_action(sig, now, nullptr);
  }
  unlock();
}

void unwrap_all() {
  if (!lock())
    return;
  for (int sig = 1; sig <= kSignals; sig++) {
    if (!g_wrapped[sig])
      continue;
    KernelAction now{};
    // One the kernel reset (SA_RESETHAND) or that changed behind our back
    // stays as it is.
    if (kernel_action(sig, nullptr, &now) == 0 && is_ours(now))
      (void)kernel_action(sig, &g_action[sig], nullptr);
    g_wrapped[sig] = false;
  }
  unlock();
}

long program_sigaction(long sig, const KernelAction *act, long old) {
  if (sig < 1 || sig > kSignals || !lock()) {
    // Not ours to judge (the kernel answers EINVAL), or a handler of this
    // thread changing actions inside a change: as it is.
    return raw(SYS_rt_sigaction, sig, reinterpret_cast<long>(act), old, 8);
  }
  int s = static_cast<int>(sig);
  bool was_wrapped = g_wrapped[s];
  KernelAction before = g_action[s];
  KernelAction kold{};
  long rc = act ? set_program_action(s, *act, old ? &kold : nullptr)
                : kernel_action(s, nullptr, old ? &kold : nullptr);
  unlock();
  if (rc != 0 || !old)
    return rc;
  // The program sees its own handler, not our entry.
  const KernelAction &shown = was_wrapped && is_ours(kold) ? before : kold;
  if (runtime::helpers::safe_copy(reinterpret_cast<void *>(old), &shown,
                                  sizeof shown) != sizeof shown)
    return -EFAULT;
  return rc;
}

} // namespace ubtrace::agent::syscalls::signals

extern "C" void ubt_program_signal(int sig, siginfo_t *info, void *uc) {
  using namespace ubtrace::agent::syscalls::signals;
  using namespace ubtrace::agent::syscalls::state;
  if (sig < 1 || sig > kSignals)
    return;
  KernelAction a = g_action[sig];
  if (a.flags & kSaResethand)
    g_wrapped[sig] = false; // the kernel put SIG_DFL back as it delivered
  volatile char *selector = nullptr;
  char found = kAllow;
  // Tracing stopped (maybe under a seccomp filter that forbids any call of
  // ours): straight through. Else the id is asked of the kernel: a vfork
  // child may have left its own in the TLS it shared with this thread.
  long tid = is_active() ? g_raw(SYS_gettid, 0, 0, 0, 0, 0, 0) : 0;
  if (tid > 0 && static_cast<size_t>(tid) < kMaxTid && g_enabled &&
      g_enabled[tid]) {
    selector = &g_selector[tid];
    found = *selector;
    *selector = kBlock; // the program's code: traced
  }
  if (a.handler > 1) {
    if (a.flags & kSaSiginfo)
      reinterpret_cast<void (*)(int, siginfo_t *, void *)>(a.handler)(sig, info,
                                                                      uc);
    else
      reinterpret_cast<void (*)(int)>(a.handler)(sig);
  }
  if (selector)
    *selector = found;
}
