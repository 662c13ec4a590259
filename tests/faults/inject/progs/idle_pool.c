/* An idle thread pool: every thread parked in one of glibc's waits (defect
 * 21), plus two that are not parked where the injector may borrow them.
 *   main     pthread_join (of the waker)
 *   waker    sem_wait; it holds the mutex, the write lock and one place
 *            of the barrier the others wait on
 *   cond     pthread_cond_wait (woken by a signal from the waker)
 *   bcast    pthread_cond_wait on another condvar (woken by a broadcast)
 *   timed    pthread_cond_timedwait until an absolute deadline (argv[1]
 *            seconds after the start, 3 by default): it must time out
 *            then, not earlier, and not wake
 *   semtimed sem_timedwait, deadline 60 s: woken by a post
 *   mutex    pthread_mutex_lock of the mutex the waker holds
 *   barrier  pthread_barrier_wait
 *   rwlock   pthread_rwlock_rdlock of the lock the waker holds
 *   flocker  flockfile(a FILE) then pthread_cond_wait (parked, holding the
 *            FILE's lock on its own account)
 *   printer  fprintf to that FILE: waits for its lock inside glibc
 *            (__lll_lock_wait_private called by fprintf): not parked in a
 *            wait of the program's; never to be borrowed
 * SIGUSR1 (a handler on the main thread only) posts the waker's semaphore:
 * the waker then wakes everyone, and each woken thread calls work(ID) once.
 * It prints "ready ROLE=TID ..." first and "done ..." at the end: which
 * roles worked, and "timed=ok" if the timed wait timed out at its
 * deadline. Exits 0 if all went as said. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
  WAKER,
  COND,
  BCAST,
  TIMED,
  SEMTIMED,
  MUTEX,
  BARRIER,
  RWLOCK,
  FLOCKER,
  PRINTER,
  ROLES
};
static const char *const kNames[ROLES] = {
    "waker", "cond",    "bcast",  "timed",   "semtimed",
    "mutex", "barrier", "rwlock", "flocker", "printer"};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_bcast = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_timed_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_flock_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t g_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t g_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t g_barrier;
static sem_t g_go, g_semtimed, g_holding;
static int g_woken[ROLES], g_flag[ROLES];
static atomic_int g_tids[ROLES];
static struct timespec g_deadline;
static int g_timed_ok;
static FILE *g_file;
static atomic_int g_file_locked;

__attribute__((noinline)) void work(long role) {
  __atomic_add_fetch(&g_woken[role], 1, __ATOMIC_SEQ_CST);
}

static void on_usr1(int sig) {
  (void)sig;
  sem_post(&g_go);
}

static void wait_flag(pthread_cond_t *cond, int role) {
  pthread_mutex_lock(&g_lock);
  while (!g_flag[role])
    pthread_cond_wait(cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
}

static void *thread(void *arg) {
  long role = (long)arg;
  g_tids[role] = gettid();
  switch (role) {
  case WAKER:
    pthread_mutex_lock(&g_held);
    pthread_rwlock_wrlock(&g_rwlock);
    sem_post(&g_holding);
    while (sem_wait(&g_go) != 0)
      ;
    pthread_mutex_lock(&g_lock);
    g_flag[COND] = g_flag[BCAST] = g_flag[FLOCKER] = 1;
    pthread_cond_signal(&g_cond);
    pthread_cond_broadcast(&g_bcast);
    pthread_cond_signal(&g_flock_cond);
    pthread_mutex_unlock(&g_lock);
    sem_post(&g_semtimed);
    pthread_mutex_unlock(&g_held);
    pthread_rwlock_unlock(&g_rwlock);
    pthread_barrier_wait(&g_barrier);
    break;
  case COND:
    wait_flag(&g_cond, COND);
    break;
  case BCAST:
    wait_flag(&g_bcast, BCAST);
    break;
  case TIMED: {
    pthread_mutex_lock(&g_lock);
    int rc = 0;
    while (rc == 0 && !g_flag[TIMED])
      rc = pthread_cond_timedwait(&g_timed_cond, &g_lock, &g_deadline);
    pthread_mutex_unlock(&g_lock);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    g_timed_ok = rc == ETIMEDOUT && (now.tv_sec > g_deadline.tv_sec ||
                                     (now.tv_sec == g_deadline.tv_sec &&
                                      now.tv_nsec >= g_deadline.tv_nsec));
    break;
  }
  case SEMTIMED: {
    struct timespec far;
    clock_gettime(CLOCK_REALTIME, &far);
    far.tv_sec += 60;
    while (sem_timedwait(&g_semtimed, &far) != 0 && errno == EINTR)
      ;
    break;
  }
  case MUTEX:
    pthread_mutex_lock(&g_held);
    pthread_mutex_unlock(&g_held);
    break;
  case BARRIER:
    pthread_barrier_wait(&g_barrier);
    break;
  case RWLOCK:
    pthread_rwlock_rdlock(&g_rwlock);
    pthread_rwlock_unlock(&g_rwlock);
    break;
  case FLOCKER:
    flockfile(g_file);
    g_file_locked = 1;
    wait_flag(&g_flock_cond, FLOCKER);
    funlockfile(g_file);
    break;
  case PRINTER:
    fprintf(g_file, "printer\n");
    break;
  }
  work(role);
  return NULL;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  g_file = fopen("/dev/null", "w");
  clock_gettime(CLOCK_REALTIME, &g_deadline);
  g_deadline.tv_sec += argc > 1 ? atoi(argv[1]) : 3;
  sem_init(&g_go, 0, 0);
  sem_init(&g_semtimed, 0, 0);
  sem_init(&g_holding, 0, 0);
  pthread_barrier_init(&g_barrier, NULL, 2);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* the threads inherit it */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t threads[ROLES];
  pthread_create(&threads[WAKER], NULL, thread, (void *)(long)WAKER);
  while (sem_wait(&g_holding) != 0)
    ;
  for (long role = 1; role < ROLES; ++role) {
    if (role == PRINTER)
      while (!g_file_locked)
        usleep(1000);
    pthread_create(&threads[role], NULL, thread, (void *)role);
  }
  for (int role = 0; role < ROLES; ++role)
    while (!g_tids[role])
      usleep(1000);
  printf("ready main=%d", getpid());
  for (int role = 0; role < ROLES; ++role)
    printf(" %s=%d", kNames[role], (int)g_tids[role]);
  printf("\n");
  pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
  pthread_join(threads[WAKER], NULL);
  for (int role = 1; role < ROLES; ++role)
    pthread_join(threads[role], NULL);
  int all = g_timed_ok;
  printf("done");
  for (int role = 0; role < ROLES; ++role) {
    printf(" %s=%d", kNames[role], g_woken[role]);
    all = all && g_woken[role] == 1;
  }
  printf(" timed=%s\n", g_timed_ok ? "ok" : "bad");
  return all ? 0 : 1;
}
