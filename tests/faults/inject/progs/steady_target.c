/* A target that checks its own state all the time, for the kill-the-
 * injector tests. Its threads, each in a state the injector may borrow:
 *   main     blocked in read(0) (a pipe the test writes "q" to at the end)
 *   sleeper  back-to-back relative nanosleeps of 20 ms, each of which must
 *            return 0 after its full time (a restart that lost the time
 *            left, or an EINTR, is an error)
 *   waiter   pthread_cond_wait until told to stop: it must never come back
 *            before that (glibc's condvar has no spurious wakeups without
 *            a signal or a broadcast)
 *   timed    pthread_cond_timedwait with absolute deadlines 30 ms ahead,
 *            each must time out with ETIMEDOUT no earlier than its deadline
 *   crunch   every general register, xmm/ymm0-14, MXCSR and the direction
 *            flag held at known values and compared in a loop (the
 *            unit tests' register_check loop)
 * It prints "ready <tid of each role>" first; on "q" it stops them and
 * prints "ok" or the first error, and exits 0 (ok) or 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile int ubt_register_check_stop;
volatile unsigned long ubt_register_check_loops;
long ubt_check_registers(int use_avx);

static atomic_int g_stop;
static char g_error[256];
static pthread_mutex_t g_error_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_wait_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wait_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t g_timed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_timed_cond = PTHREAD_COND_INITIALIZER;
static atomic_int g_tids[4];
static long g_crunch_result = -1;

static void fail(const char *what, long value) {
  pthread_mutex_lock(&g_error_lock);
  if (!g_error[0])
    snprintf(g_error, sizeof g_error, "%s %ld", what, value);
  pthread_mutex_unlock(&g_error_lock);
}

static double now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sleeper(void *arg) {
  (void)arg;
  g_tids[0] = gettid();
  while (!g_stop) {
    struct timespec want = {0, 20 * 1000 * 1000}, left = {0, 0};
    double start = now(CLOCK_MONOTONIC);
    int rc = nanosleep(&want, &left);
    double slept = now(CLOCK_MONOTONIC) - start;
    if (rc != 0)
      fail("sleeper: nanosleep failed, errno", errno);
    else if (slept < 0.020)
      fail("sleeper: slept too little, us", (long)(slept * 1e6));
  }
  return NULL;
}

static void *waiter(void *arg) {
  (void)arg;
  g_tids[1] = gettid();
  pthread_mutex_lock(&g_wait_lock);
  while (!g_stop) {
    pthread_cond_wait(&g_wait_cond, &g_wait_lock);
    if (!g_stop)
      fail("waiter: woke up without being told", 0);
  }
  pthread_mutex_unlock(&g_wait_lock);
  return NULL;
}

static void *timed(void *arg) {
  (void)arg;
  g_tids[2] = gettid();
  pthread_mutex_lock(&g_timed_lock);
  while (!g_stop) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += 30 * 1000 * 1000;
    if (deadline.tv_nsec >= 1000000000) {
      deadline.tv_nsec -= 1000000000;
      deadline.tv_sec += 1;
    }
    int rc = pthread_cond_timedwait(&g_timed_cond, &g_timed_lock, &deadline);
    if (g_stop)
      break;
    if (rc != ETIMEDOUT)
      fail("timed: timedwait returned", rc);
    else if (now(CLOCK_REALTIME) <
             (double)deadline.tv_sec + (double)deadline.tv_nsec / 1e9)
      fail("timed: timed out before its deadline", 0);
  }
  pthread_mutex_unlock(&g_timed_lock);
  return NULL;
}

static void *crunch(void *arg) {
  g_tids[3] = gettid();
  g_crunch_result = ubt_check_registers((int)(long)arg);
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  __builtin_cpu_init();
  int avx = __builtin_cpu_supports("avx2");
  pthread_t threads[4];
  void *(*roles[4])(void *) = {sleeper, waiter, timed, crunch};
  for (int i = 0; i < 4; ++i)
    pthread_create(&threads[i], NULL, roles[i], (void *)(long)avx);
  while (!g_tids[0] || !g_tids[1] || !g_tids[2] || !g_tids[3])
    usleep(1000);
  printf("ready main=%d sleeper=%d waiter=%d timed=%d crunch=%d\n", getpid(),
         g_tids[0], g_tids[1], g_tids[2], g_tids[3]);
  char line[16] = {0};
  ssize_t n = read(0, line, sizeof line - 1);
  if (n != 2 || strcmp(line, "q\n") != 0)
    fail("main: read returned", n < 0 ? -errno : n);
  g_stop = 1;
  ubt_register_check_stop = 1;
  pthread_mutex_lock(&g_wait_lock);
  pthread_cond_broadcast(&g_wait_cond);
  pthread_mutex_unlock(&g_wait_lock);
  pthread_mutex_lock(&g_timed_lock);
  pthread_cond_broadcast(&g_timed_cond);
  pthread_mutex_unlock(&g_timed_lock);
  for (int i = 0; i < 4; ++i)
    pthread_join(threads[i], NULL);
  if (g_crunch_result != 0)
    fail("crunch: register changed, code", g_crunch_result);
  if (g_error[0]) {
    printf("error %s\n", g_error);
    return 1;
  }
  printf("ok\n");
  return 0;
}
