/* Threads blocked in system call wrappers that hold no glibc lock (a
 * sibling of defect 21: each must be a safe point): flock, lockf and
 * fcntl(F_SETLKW) on a file whose locks a child process holds,
 * mq_timedreceive on an empty queue, splice from an empty pipe, sigwait.
 * The main thread reads stdin: on "go" it releases them all (kills the
 * child, sends a message, writes the pipe, signals the sigwait thread),
 * joins them and prints "done N" (N threads that came back with success);
 * exits 0 if all did. Prints "ready NAME=TID ..." first. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { FLOCK, LOCKF, FCNTL, MQ, SPLICE, SIGWAIT, ROLES };
static const char *const kNames[ROLES] = {"flock", "lockf",  "fcntl",
                                          "mq",    "splice", "sigwait"};
static char g_path[64], g_queue[64];
static mqd_t g_mq;
static int g_pipe[2];
static atomic_int g_tids[ROLES], g_ok;

static void *thread(void *arg) {
  long role = (long)arg;
  g_tids[role] = gettid();
  int ok = 0;
  if (role == FLOCK || role == LOCKF || role == FCNTL) {
    int fd = open(g_path, O_RDWR);
    if (role == FLOCK)
      ok = flock(fd, LOCK_EX) == 0;
    else if (role == LOCKF)
      ok = lockf(fd, F_LOCK, 1) == 0;
    else {
      struct flock lock = {
          .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 1};
      ok = fcntl(fd, F_SETLKW, &lock) == 0;
    }
  } else if (role == MQ) {
    char buffer[64];
    struct timespec far;
    clock_gettime(CLOCK_REALTIME, &far);
    far.tv_sec += 60;
    ok = mq_timedreceive(g_mq, buffer, sizeof buffer, NULL, &far) == 2;
  } else if (role == SPLICE) {
    int out[2];
    if (pipe(out) == 0)
      ok = splice(g_pipe[0], NULL, out[1], NULL, 16, 0) == 1;
  } else {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    int sig = 0;
    ok = sigwait(&set, &sig) == 0 && sig == SIGUSR2;
  }
  if (ok)
    ++g_ok;
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* Nothing left behind if it is killed: the file and the queue are
   * unlinked at once; each opener of the file gets its own open file
   * description through /proc (flock and fcntl locks conflict between
   * those). */
  char name[64];
  snprintf(name, sizeof name, "/tmp/ubt-wrappers-%d", getpid());
  int file = open(name, O_CREAT | O_RDWR, 0600);
  unlink(name);
  snprintf(g_path, sizeof g_path, "/proc/%d/fd/%d", getpid(), file);
  snprintf(g_queue, sizeof g_queue, "/ubt-wrappers-%d", getpid());
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, NULL);
  int held[2];
  if (pipe(held) != 0 || pipe(g_pipe) != 0)
    return 2;
  pid_t holder = fork();
  if (holder == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* it never outlives the test */
    if (getppid() == 1)
      _exit(0);
    int fd = open(g_path, O_RDWR);
    flock(fd, LOCK_EX);
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    fcntl(fd, F_SETLK, &lock); /* the whole file */
    write(held[1], "h", 1);
    pause();
    _exit(0);
  }
  char c;
  read(held[0], &c, 1);
  struct mq_attr attr = {.mq_maxmsg = 4, .mq_msgsize = 64};
  g_mq = mq_open(g_queue, O_CREAT | O_RDWR, 0600, &attr);
  mq_unlink(g_queue);
  pthread_t threads[ROLES];
  for (long role = 0; role < ROLES; ++role)
    pthread_create(&threads[role], NULL, thread, (void *)role);
  for (int role = 0; role < ROLES; ++role)
    while (!g_tids[role])
      usleep(1000);
  printf("ready");
  for (int role = 0; role < ROLES; ++role)
    printf(" %s=%d", kNames[role], (int)g_tids[role]);
  printf("\n");
  char line[16] = {0};
  while (read(0, line, sizeof line - 1) > 0 && strncmp(line, "go", 2) != 0)
    ;
  kill(holder, SIGKILL);
  waitpid(holder, NULL, 0);
  mq_send(g_mq, "go", 2, 0);
  write(g_pipe[1], "x", 1);
  pthread_kill(threads[SIGWAIT], SIGUSR2);
  for (int role = 0; role < ROLES; ++role)
    pthread_join(threads[role], NULL);
  printf("done %d\n", (int)g_ok);
  return g_ok == ROLES ? 0 : 1;
}
