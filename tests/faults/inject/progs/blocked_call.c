/* Blocks one thread in one system call, for the tests that inject while it
 * is blocked there and check that the call's outcome is what it would have
 * been without the injection.
 *   blocked_call CASE [restart]
 * SIGUSR1 gets a handler (without SA_RESTART unless "restart" is given)
 * and is blocked in the thread's mask except where the case says. A second
 * thread (the "helper") reads commands from stdin: "wake" ends the call
 * where the case needs it (a futex wake, a condvar signal, a pipe write),
 * "quit" makes the program exit once the call has returned. Cases:
 *   read          read(pipe): "wake" writes "x" into it
 *   nanosleep     SYS_nanosleep, 1.5 s relative, with a remainder
 *   clock_nanosleep  CLOCK_MONOTONIC, 1.5 s relative
 *   futex         FUTEX_WAIT on a word: "wake" sets it and wakes it
 *   futex_timed   FUTEX_WAIT_BITSET, absolute deadline 1.5 s ahead
 *   epoll_pwait   on the pipe, with a mask that lets SIGUSR1 in: "wake"
 *                 writes into the pipe; an EINTR (a stop alone causes one)
 *                 is counted and the wait repeated
 *   sigsuspend    with a mask that lets SIGUSR1 in (blocked otherwise)
 * It prints "ready tid=T" (T: the blocked thread), and after the call
 * "CASE rc=R errno=E handled=H early=Y full=F mask=M", where early = the
 * call returned before "wake" (or the deadline), full = a sleep lasted its
 * time, mask = the thread's mask after the call is the one before it. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *g_case;
static int g_pipe[2];
static atomic_int g_word, g_woken, g_handled, g_done, g_tid;

static void on_usr1(int sig) {
  (void)sig;
  ++g_handled;
}

static double now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *helper(void *arg) {
  (void)arg;
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (strncmp(line, "wake", 4) == 0) {
      g_woken = 1;
      if (!strcmp(g_case, "read") || !strcmp(g_case, "epoll_pwait"))
        write(g_pipe[1], "x", 1);
      g_word = 1;
      syscall(SYS_futex, &g_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    } else if (strncmp(line, "quit", 4) == 0) {
      while (!g_done)
        usleep(1000);
      exit(0);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  g_case = argc > 1 ? argv[1] : "read";
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = argc > 2 && !strcmp(argv[2], "restart") ? SA_RESTART : 0;
  sigaction(SIGUSR1, &sa, NULL);
  sigset_t usr1, before, after, open;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  /* The helper inherits SIGUSR1 blocked: signals for the process go to
   * the blocked thread alone. */
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);
  if (pipe(g_pipe) != 0)
    return 2;
  pthread_t thread;
  pthread_create(&thread, NULL, helper, NULL);
  int epfd = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  epoll_ctl(epfd, EPOLL_CTL_ADD, g_pipe[0], &ev);
  /* Cases where SIGUSR1 interrupts the call unblock it in the thread; the
   * mask-switching calls let it in through their own mask. */
  int masked_call =
      !strcmp(g_case, "sigsuspend") || !strcmp(g_case, "epoll_pwait");
  if (!masked_call)
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
  pthread_sigmask(SIG_BLOCK, NULL, &before);
  open = before;
  sigdelset(&open, SIGUSR1);

  g_tid = gettid();
  printf("ready tid=%d\n", (int)g_tid);
  long rc = 0;
  int err = 0, full = -1;
  double start = now(CLOCK_MONOTONIC);
  if (!strcmp(g_case, "read")) {
    char c;
    rc = read(g_pipe[0], &c, 1);
  } else if (!strcmp(g_case, "nanosleep")) {
    struct timespec want = {1, 500000000}, left = {0, 0};
    rc = syscall(SYS_nanosleep, &want, &left);
    full = now(CLOCK_MONOTONIC) - start >= 1.5;
  } else if (!strcmp(g_case, "clock_nanosleep")) {
    struct timespec want = {1, 500000000}, left = {0, 0};
    rc = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &want, &left);
    if (rc > 0) {
      err = (int)rc;
      rc = -1;
    }
    full = now(CLOCK_MONOTONIC) - start >= 1.5;
  } else if (!strcmp(g_case, "futex")) {
    rc = syscall(SYS_futex, &g_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  } else if (!strcmp(g_case, "futex_timed")) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += 1;
    deadline.tv_nsec += 500000000;
    if (deadline.tv_nsec >= 1000000000) {
      deadline.tv_nsec -= 1000000000;
      deadline.tv_sec += 1;
    }
    rc = syscall(SYS_futex, &g_word, FUTEX_WAIT_BITSET_PRIVATE, 0, &deadline,
                 NULL, FUTEX_BITSET_MATCH_ANY);
    full = now(CLOCK_MONOTONIC) >=
           (double)deadline.tv_sec + (double)deadline.tv_nsec / 1e9;
  } else if (!strcmp(g_case, "epoll_pwait")) {
    int eintr = 0;
    for (;;) {
      struct epoll_event out;
      rc = epoll_pwait(epfd, &out, 1, -1, &open);
      if (rc < 0 && errno == EINTR && !g_handled) {
        ++eintr;
        continue;
      }
      break;
    }
    full = eintr;
  } else if (!strcmp(g_case, "sigsuspend")) {
    rc = sigsuspend(&open);
  }
  if (rc < 0 && !err)
    err = errno;
  int early = !g_woken && !g_handled && strcmp(g_case, "futex_timed") &&
              strcmp(g_case, "nanosleep") && strcmp(g_case, "clock_nanosleep");
  pthread_sigmask(SIG_BLOCK, NULL, &after);
  unsigned long was, is;
  memcpy(&was, &before, sizeof was);
  memcpy(&is, &after, sizeof is);
  char mask[64] = "same";
  if (was != is)
    snprintf(mask, sizeof mask, "changed:%lx:%lx", was, is);
  printf("%s rc=%ld errno=%s handled=%d early=%d full=%d mask=%s\n", g_case, rc,
         err ? strerrorname_np(err) : "0", (int)g_handled, early, full, mask);
  g_done = 1;
  pthread_join(thread, NULL);
  return 0;
}
