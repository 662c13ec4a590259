/* Linked into libubtrace_preload.so (see gpu/preload_interpose.c for why
 * interposers live there). A program started with -c that installs its own
 * SIGTRAP or SIGILL handler after the agent must not take the hooks' trap
 * handlers out: their traps (int3 sites, the microseconds of a patch) would
 * reach the program's handler and the program would run on from the middle
 * of an instruction. Once the hooks' handlers are in, the program's handler
 * is chained behind them (runtime/hook/trap_handler.h); everything else
 * goes to libc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>

extern int ubtrace_filter_sigaction(int sig, const struct sigaction *act,
                                    struct sigaction *old);

typedef int (*ubt_sigaction_fn)(int, const struct sigaction *,
                                struct sigaction *);
typedef sighandler_t (*ubt_signal_fn)(int, sighandler_t);

static int ubt_filtered(int sig) { return sig == SIGTRAP || sig == SIGILL; }

__attribute__((visibility("default"))) int
sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (ubt_filtered(sig) && ubtrace_filter_sigaction(sig, act, old))
    return 0;
  static ubt_sigaction_fn real;
  if (!real)
    real = (ubt_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
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
  static ubt_signal_fn real;
  if (!real)
    real = (ubt_signal_fn)dlsym(RTLD_NEXT, "signal");
  return real ? real(sig, fn) : SIG_ERR;
}
