/* Linked into libubtrace_preload.so (see gpu/preload_interpose.c for why
 * interposers live there); they interpose only when LD_PRELOAD names the
 * library (-c), not when -p injection dlopens it.
 *
 * Handlers. A program that installs its own SIGTRAP, SIGILL, SIGSEGV or
 * SIGBUS handler after the agent must not take ours out: the hooks' traps
 * (int3 sites, the microseconds of a patch) and the faults of fault-safe
 * reads would reach the program's handler and the program would run on
 * from the middle of an instruction. Once ours are in, the program's
 * handler is chained behind them (runtime/helpers/signal_chain.h).
 *
 * Masks. The kernel kills a thread that takes a synchronous SIGTRAP or
 * SIGILL while blocking it, so a program thread that blocks all signals
 * (sigfillset + pthread_sigmask, as signalfd and sigwait servers do) would
 * die at a trap of ours. Both are taken out of every mask the program sets
 * through libc (sigprocmask, pthread_sigmask, sigblock, sigsetmask,
 * sighold, a handler's sa_mask, syscall(SYS_rt_sigprocmask)): blocking a
 * synchronous signal has no effect the program can rely on, and an
 * asynchronous SIGTRAP or SIGILL (kill -TRAP) is then delivered instead of
 * held. (Fault-safe reads cope with a blocked SIGSEGV or SIGBUS
 * themselves: runtime/helpers/safe_copy.h.) What remains is in
 * runtime/hook/hook.h.
 *
 * With -p (dlopened, nothing interposed) the agent points the program's
 * GOT entries for these at them instead (runtime/agent/got_interpose.h).
 *
 * Profiling. While profile probes sample (runtime/agent/profile.h), their
 * signal is kept out of masks too, so that threads that block every signal
 * are sampled, and out of the sets sigwait() & co. and signalfd() wait on.
 *
 * Sandboxes. prctl(PR_SET_SECCOMP) and syscall(SYS_seccomp) tell the agent
 * first that hit-time system calls may be forbidden from now on
 * (runtime/helpers/safe_copy.h). */
#define _GNU_SOURCE
#include "sandbox_notice.h" /* this folder: no include path here */

#include <dlfcn.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

extern int ubtrace_filter_sigaction(int sig, const struct sigaction *act,
                                    struct sigaction *old);
extern void ubtrace_signals_interposed(void);
extern void ubtrace_sandboxed(int all_threads);
extern int ubtrace_profile_signal(void);
extern int ubtrace_syscall_signal(void);
extern void ubtrace_thread_started(void);
struct ubt_interposer {
  const char *name;
  void *fn;
};
extern void ubtrace_offer_interposers(const struct ubt_interposer *table,
                                      size_t count);

typedef int (*ubt_sigaction_fn)(int, const struct sigaction *,
                                struct sigaction *);
typedef sighandler_t (*ubt_signal_fn)(int, sighandler_t);
typedef int (*ubt_mask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*ubt_int_fn)(int);
typedef int (*ubt_prctl_fn)(int, unsigned long, unsigned long, unsigned long,
                            unsigned long);
typedef long (*ubt_syscall_fn)(long, long, long, long, long, long, long);
typedef int (*ubt_sigwait_fn)(const sigset_t *, int *);
typedef int (*ubt_sigwaitinfo_fn)(const sigset_t *, siginfo_t *);
typedef int (*ubt_sigtimedwait_fn)(const sigset_t *, siginfo_t *,
                                   const struct timespec *);
typedef int (*ubt_signalfd_fn)(int, const sigset_t *, int);

/* The next definitions, looked up by the constructor (dlsym is not
 * async-signal-safe, and masks are set in signal handlers), or on first use
 * by a call that comes before it. */
static ubt_sigaction_fn ubt_real_sigaction;
static ubt_signal_fn ubt_real_signal;
static ubt_mask_fn ubt_real_sigprocmask, ubt_real_pthread_sigmask;
static ubt_int_fn ubt_real_sigblock, ubt_real_sigsetmask, ubt_real_sighold;
static ubt_prctl_fn ubt_real_prctl;
static ubt_syscall_fn ubt_real_syscall;
static ubt_sigwait_fn ubt_real_sigwait;
static ubt_sigwaitinfo_fn ubt_real_sigwaitinfo;
static ubt_sigtimedwait_fn ubt_real_sigtimedwait;
static ubt_signalfd_fn ubt_real_signalfd;

#define UBT_REAL(type, name)                                                   \
  type real = ubt_real_##name;                                                 \
  if (!real)                                                                   \
  real = ubt_real_##name = (type)dlsym(RTLD_NEXT, #name)

/* Signals whose handler ours is chained in front of: the profiling signal
 * too, while profile probes sample (runtime/agent/profile.h). */
static int ubt_filtered(int sig) {
  return sig == SIGTRAP || sig == SIGILL || sig == SIGSEGV || sig == SIGBUS ||
         (sig > 0 &&
          (sig == ubtrace_profile_signal() || sig == ubtrace_syscall_signal()));
}

/* Signals kept out of masks. */
static const int ubt_synchronous[] = {SIGTRAP, SIGILL};

/* Whether set blocks every real-time signal (sigfillset and the like): a
 * set that names some of them means the program uses those. */
static int ubt_blanket(const sigset_t *set) {
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
    if (!sigismember(set, sig))
      return 0;
  return 1;
}

/* set without the synchronous signals, in *copy; returns the set to pass. */
static const sigset_t *ubt_strip(const sigset_t *set, sigset_t *copy) {
  if (!set)
    return set;
  *copy = *set;
  for (size_t i = 0; i < sizeof ubt_synchronous / sizeof *ubt_synchronous; i++)
    sigdelset(copy, ubt_synchronous[i]);
  /* A thread that blocks every signal would go unsampled; one that blocks
   * some, the profiling one among them, keeps its mask (it waits for it). */
  int profiling = ubtrace_profile_signal();
  if (profiling > 0 && ubt_blanket(set))
    sigdelset(copy, profiling);
  /* While system calls are traced, a thread blocking SIGSYS would be
   * killed at its next one (runtime/agent/syscalls.h). */
  int dispatch = ubtrace_syscall_signal();
  if (dispatch > 0)
    sigdelset(copy, dispatch);
  return copy;
}

static int ubt_mask_bits(int mask) {
  for (size_t i = 0; i < sizeof ubt_synchronous / sizeof *ubt_synchronous; i++)
    mask &= ~(1 << (ubt_synchronous[i] - 1));
  if (ubtrace_syscall_signal() > 0)
    mask &= ~(1 << (ubtrace_syscall_signal() - 1));
  return mask;
}

__attribute__((visibility("default"))) int
sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  struct sigaction stripped;
  if (act) {
    stripped = *act;
    ubt_strip(&act->sa_mask, &stripped.sa_mask);
    act = &stripped;
  }
  if (ubt_filtered(sig) && ubtrace_filter_sigaction(sig, act, old))
    return 0;
  UBT_REAL(ubt_sigaction_fn, sigaction);
  return real ? real(sig, act, old) : -1;
}

/* glibc's signal() sets its handler without going through sigaction(). */
__attribute__((visibility("default"))) sighandler_t signal(int sig,
                                                           sighandler_t fn) {
  if (ubt_filtered(sig)) {
    struct sigaction act, old;
    act.sa_handler = fn;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (ubtrace_filter_sigaction(sig, &act, &old))
      return old.sa_handler;
  }
  UBT_REAL(ubt_signal_fn, signal);
  return real ? real(sig, fn) : SIG_ERR;
}

static int ubt_set_mask(ubt_mask_fn real, int how, const sigset_t *set,
                        sigset_t *old) {
  sigset_t copy;
  if (how != SIG_UNBLOCK)
    set = ubt_strip(set, &copy);
  return real ? real(how, set, old) : -1;
}

__attribute__((visibility("default"))) int
sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  UBT_REAL(ubt_mask_fn, sigprocmask);
  return ubt_set_mask(real, how, set, old);
}

__attribute__((visibility("default"))) int
pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  UBT_REAL(ubt_mask_fn, pthread_sigmask);
  return ubt_set_mask(real, how, set, old);
}

/* The sets a thread waits on (sigwait, sigwaitinfo, sigtimedwait,
 * signalfd) without the profiling signal when they hold every signal: a
 * profiling timer's signal pending on the thread is then never taken for
 * one of the program's. A set that names some signals is the program's
 * choice (it may wait for that very one) and stays. */
static const sigset_t *ubt_strip_wait(const sigset_t *set, sigset_t *copy) {
  int profiling = ubtrace_profile_signal();
  if (!set || profiling <= 0 || !ubt_blanket(set))
    return set;
  *copy = *set;
  sigdelset(copy, profiling);
  return copy;
}

__attribute__((visibility("default"))) int sigwait(const sigset_t *set,
                                                   int *sig) {
  sigset_t copy;
  UBT_REAL(ubt_sigwait_fn, sigwait);
  return real ? real(ubt_strip_wait(set, &copy), sig) : -1;
}

__attribute__((visibility("default"))) int sigwaitinfo(const sigset_t *set,
                                                       siginfo_t *info) {
  sigset_t copy;
  UBT_REAL(ubt_sigwaitinfo_fn, sigwaitinfo);
  return real ? real(ubt_strip_wait(set, &copy), info) : -1;
}

__attribute__((visibility("default"))) int
sigtimedwait(const sigset_t *set, siginfo_t *info,
             const struct timespec *timeout) {
  sigset_t copy;
  UBT_REAL(ubt_sigtimedwait_fn, sigtimedwait);
  return real ? real(ubt_strip_wait(set, &copy), info, timeout) : -1;
}

__attribute__((visibility("default"))) int signalfd(int fd, const sigset_t *set,
                                                    int flags) {
  sigset_t copy;
  UBT_REAL(ubt_signalfd_fn, signalfd);
  return real ? real(fd, ubt_strip_wait(set, &copy), flags) : -1;
}

__attribute__((visibility("default"))) int sigblock(int mask) {
  UBT_REAL(ubt_int_fn, sigblock);
  return real ? real(ubt_mask_bits(mask)) : -1;
}

__attribute__((visibility("default"))) int sigsetmask(int mask) {
  UBT_REAL(ubt_int_fn, sigsetmask);
  return real ? real(ubt_mask_bits(mask)) : -1;
}

__attribute__((visibility("default"))) int sighold(int sig) {
  if (sig == SIGTRAP || sig == SIGILL ||
      (sig > 0 &&
       (sig == ubtrace_profile_signal() || sig == ubtrace_syscall_signal())))
    return 0;
  UBT_REAL(ubt_int_fn, sighold);
  return real ? real(sig) : -1;
}

__attribute__((visibility("default"))) int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long a = va_arg(ap, unsigned long);
  unsigned long b = va_arg(ap, unsigned long);
  unsigned long c = va_arg(ap, unsigned long);
  unsigned long d = va_arg(ap, unsigned long);
  va_end(ap);
  if (ubt_seccomp_scope(SYS_prctl, (unsigned long)option, a))
    ubtrace_sandboxed(0);
  UBT_REAL(ubt_prctl_fn, prctl);
  return real ? real(option, a, b, c, d) : -1;
}

__attribute__((visibility("default"))) long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (int i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  sigset_t copy;
  int scope = ubt_seccomp_scope(number, a[0], a[1]);
  if (scope)
    ubtrace_sandboxed(scope == 2);
  else if (number == SYS_rt_sigprocmask && a[0] != SIG_UNBLOCK && a[1] &&
           (unsigned long)a[3] <= sizeof copy) {
    /* The kernel reads a[3] bytes of the set: strip them in a copy. */
    sigset_t given;
    sigemptyset(&given);
    __builtin_memcpy(&given, (const void *)a[1], (size_t)a[3]);
    a[1] = (long)ubt_strip(&given, &copy);
  }
  UBT_REAL(ubt_syscall_fn, syscall);
  return real ? real(number, a[0], a[1], a[2], a[3], a[4], a[5]) : -1;
}

/* This library's own definitions: taking the address of the exported name
 * would give the first definition in lookup order, libc's when dlopened. */
#define UBT_OWN(name)                                                          \
  extern __typeof(name) ubt_own_##name                                         \
      __attribute__((alias(#name), visibility("hidden")))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
UBT_OWN(sigaction);
UBT_OWN(signal);
UBT_OWN(sigprocmask);
UBT_OWN(pthread_sigmask);
UBT_OWN(sigblock);
UBT_OWN(sigsetmask);
UBT_OWN(sighold);
UBT_OWN(prctl);
UBT_OWN(syscall);
UBT_OWN(sigwait);
UBT_OWN(sigwaitinfo);
UBT_OWN(sigtimedwait);
UBT_OWN(signalfd);
#pragma GCC diagnostic pop
/* preload_threads.c's. */
extern int ubt_own_pthread_create(pthread_t *, const pthread_attr_t *,
                                  void *(*)(void *), void *);

/* After the agent's initialisers (it is this library's dependency), and
 * before preload.c's constructor starts the agent (a lower priority runs
 * first): these dlsym calls must come before any hook, or a probe on dlsym
 * would count them as the program's. */
__attribute__((constructor(102))) static void ubt_signals_init(void) {
  ubt_real_sigaction = (ubt_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  ubt_real_signal = (ubt_signal_fn)dlsym(RTLD_NEXT, "signal");
  ubt_real_sigprocmask = (ubt_mask_fn)dlsym(RTLD_NEXT, "sigprocmask");
  ubt_real_pthread_sigmask = (ubt_mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
  ubt_real_sigblock = (ubt_int_fn)dlsym(RTLD_NEXT, "sigblock");
  ubt_real_sigsetmask = (ubt_int_fn)dlsym(RTLD_NEXT, "sigsetmask");
  ubt_real_sighold = (ubt_int_fn)dlsym(RTLD_NEXT, "sighold");
  ubt_real_prctl = (ubt_prctl_fn)dlsym(RTLD_NEXT, "prctl");
  ubt_real_syscall = (ubt_syscall_fn)dlsym(RTLD_NEXT, "syscall");
  ubt_real_sigwait = (ubt_sigwait_fn)dlsym(RTLD_NEXT, "sigwait");
  ubt_real_sigwaitinfo = (ubt_sigwaitinfo_fn)dlsym(RTLD_NEXT, "sigwaitinfo");
  ubt_real_sigtimedwait = (ubt_sigtimedwait_fn)dlsym(RTLD_NEXT, "sigtimedwait");
  ubt_real_signalfd = (ubt_signalfd_fn)dlsym(RTLD_NEXT, "signalfd");
  /* The program's calls reach these only when LD_PRELOAD put this library
   * first; dlopened (-p), they are never called. */
  Dl_info global, self;
  if (dladdr(dlsym(RTLD_DEFAULT, "sigaction"), &global) &&
      dladdr((void *)ubt_signals_init, &self) &&
      global.dli_fbase == self.dli_fbase) {
    ubtrace_signals_interposed();
    return;
  }
  /* Dlopened: the agent points the program's GOT entries here instead
   * (runtime/agent/got_interpose.h). */
  static const struct ubt_interposer table[] = {
      {"sigaction", (void *)ubt_own_sigaction},
      {"signal", (void *)ubt_own_signal},
      {"sigprocmask", (void *)ubt_own_sigprocmask},
      {"pthread_sigmask", (void *)ubt_own_pthread_sigmask},
      {"sigblock", (void *)ubt_own_sigblock},
      {"sigsetmask", (void *)ubt_own_sigsetmask},
      {"sighold", (void *)ubt_own_sighold},
      {"prctl", (void *)ubt_own_prctl},
      {"syscall", (void *)ubt_own_syscall},
      {"sigwait", (void *)ubt_own_sigwait},
      {"sigwaitinfo", (void *)ubt_own_sigwaitinfo},
      {"sigtimedwait", (void *)ubt_own_sigtimedwait},
      {"signalfd", (void *)ubt_own_signalfd},
      {"pthread_create", (void *)ubt_own_pthread_create},
  };
  ubtrace_offer_interposers(table, sizeof table / sizeof *table);
}
