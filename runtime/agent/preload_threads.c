/* The preload's pthread_create (interposed with -c by LD_PRELOAD, with -p
 * through the program's GOT, as preload_signals.c's functions are). While
 * profile probes sample (runtime/agent/profile.h), every new thread must get
 * its CPU-time timer before it runs the program's code: the thread starts
 * in ubt_thread_start, which arms it and calls the program's routine.
 * Otherwise it is a plain call.
 *
 * Nothing here allocates: malloc may carry one of the trace's probes, and
 * the program's own call to pthread_create must not count an agent's
 * allocation as its own. The start records come from a fixed pool; with the
 * pool busy (thousands of threads starting at once) the thread starts
 * unwrapped and the agent's rescan finds it (counted as late). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

extern int ubtrace_profile_signal(void);
extern void ubtrace_thread_started(void);

typedef int (*ubt_pthread_create_fn)(pthread_t *, const pthread_attr_t *,
                                     void *(*)(void *), void *);
static ubt_pthread_create_fn ubt_real_pthread_create;

#define UBT_STARTS 1024
struct ubt_start {
  void *(*fn)(void *);
  void *arg;
  int busy;
};
static struct ubt_start ubt_starts[UBT_STARTS];
static unsigned ubt_next_start;

static struct ubt_start *ubt_claim_start(void) {
  for (int tries = 0; tries < 64; tries++) {
    unsigned k =
        __atomic_fetch_add(&ubt_next_start, 1, __ATOMIC_RELAXED) % UBT_STARTS;
    if (__atomic_exchange_n(&ubt_starts[k].busy, 1, __ATOMIC_ACQUIRE) == 0)
      return &ubt_starts[k];
  }
  return NULL;
}

static void *ubt_thread_start(void *p) {
  struct ubt_start *s = p;
  void *(*fn)(void *) = s->fn;
  void *arg = s->arg;
  __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
  ubtrace_thread_started();
  return fn(arg);
}

__attribute__((visibility("default"))) int
pthread_create(pthread_t *thread, const pthread_attr_t *attr,
               void *(*fn)(void *), void *arg) {
  ubt_pthread_create_fn real = ubt_real_pthread_create;
  if (!real)
    real = ubt_real_pthread_create =
        (ubt_pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
  if (!real)
    return EAGAIN;
  struct ubt_start *s = ubtrace_profile_signal() > 0 ? ubt_claim_start() : NULL;
  if (!s)
    return real(thread, attr, fn, arg);
  s->fn = fn;
  s->arg = arg;
  int rc = real(thread, attr, ubt_thread_start, s);
  if (rc != 0)
    __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
  return rc;
}

/* This library's own definition, for the GOT table (preload_signals.c). */
extern __typeof(pthread_create) ubt_own_pthread_create
    __attribute__((alias("pthread_create"), visibility("hidden")));

__attribute__((constructor(102))) static void ubt_threads_init(void) {
  ubt_real_pthread_create =
      (ubt_pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
}
