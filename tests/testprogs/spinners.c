// CPU-bound threads for profile probes: argv[1] worker threads each burn
// argv[2] ms of their own CPU time in spin_worker(), then main burns as
// much in spin_main(). Flags after them:
//   block     main blocks every signal first, before any delay (the workers
//             inherit the mask), as signalfd and sigwait servers do
//   delay=MS  sleep that long before any of it (time to attach with -p)
//   own       the program profiles itself too: its own CPU-time timer on
//             the highest real-time signal with its own handler; prints
//             how many of its signals it got
//   fork      a forked child burns as much in spin_child() first
//   sigwait   a thread waits for every signal with sigwait() (the others
//             block them all) until main sends the process SIGUSR1 at the
//             end; it prints each signal it got
//   sandbox   before the threads start, a seccomp filter on main (and so on
//             the threads it makes) that kills the process at any timer
//             system call; sandbox-all: the same on every thread (TSYNC);
//             sandbox-first: as sandbox, at the start, before any delay
//   exec=N    main execs the program again (with exec=N-1) while its
//             workers still spin, N times; each image prints "image N"
// Prints "done" at the end.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long burn_ms;
volatile unsigned long sink;
static volatile sig_atomic_t own_signals;

static long thread_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Arithmetic between clock reads, so that samples land in user code.
#define BURN                                                                   \
  for (long start = thread_cpu_ms(); thread_cpu_ms() - start < burn_ms;)       \
    for (int i = 0; i < 200000; i++)                                           \
      sink = sink * 31 + (unsigned long)i;

__attribute__((noinline)) void spin_worker(void) { BURN }
__attribute__((noinline)) void spin_main(void) { BURN }
__attribute__((noinline)) void spin_child(void) { BURN }

static void *worker(void *arg) {
  (void)arg;
  spin_worker();
  return NULL;
}

static void on_own(int sig, siginfo_t *info, void *ctx) {
  (void)sig;
  (void)ctx;
  if (info->si_code == SI_TIMER && info->si_value.sival_int == 7)
    own_signals++;
}

// Kills the process at timer_create, timer_settime or timer_delete.
static void sandbox(int all_threads) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_timer_create, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_timer_settime, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_timer_delete, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog prog = {sizeof f / sizeof f[0], f};
  int rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (rc == 0)
    rc = all_threads ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                    SECCOMP_FILTER_FLAG_TSYNC, &prog)
                     : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
  if (rc != 0) {
    perror("seccomp");
    exit(2);
  }
}

static void *waiter(void *arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  for (;;) {
    int sig = 0;
    if (sigwait(&all, &sig) != 0)
      continue;
    printf("sigwait got %s\n", sig == SIGUSR1 ? "SIGUSR1" : "another");
    if (sig == SIGUSR1)
      return NULL;
  }
}

int main(int argc, char **argv) {
  int nthreads = argc > 1 ? atoi(argv[1]) : 2;
  burn_ms = argc > 2 ? atol(argv[2]) : 200;
  int block = 0, own = 0, do_fork = 0, sandboxed = 0, all_threads = 0;
  int waits = 0;
  long delay = 0;
  int execs = -1, exec_arg = 0;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "block"))
      block = 1;
    else if (!strncmp(argv[i], "delay=", 6))
      delay = atol(argv[i] + 6);
    else if (!strcmp(argv[i], "own"))
      own = 1;
    else if (!strcmp(argv[i], "fork"))
      do_fork = 1;
    else if (!strcmp(argv[i], "sigwait"))
      waits = block = 1;
    else if (!strcmp(argv[i], "sandbox"))
      sandboxed = 1;
    else if (!strcmp(argv[i], "sandbox-all"))
      sandboxed = all_threads = 1;
    else if (!strcmp(argv[i], "sandbox-first"))
      sandbox(0);
    else if (!strncmp(argv[i], "exec=", 5)) {
      execs = atoi(argv[i] + 5);
      exec_arg = i;
    }
  }
  if (execs >= 0) {
    printf("image %d\n", execs);
    fflush(stdout);
  }
  if (block) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
  }
  if (delay)
    usleep((useconds_t)delay * 1000);
  if (own) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_own;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGRTMAX, &sa, NULL);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGRTMAX;
    sev.sigev_value.sival_int = 7;
    timer_t t;
    timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &t);
    struct itimerspec its = {{0, 10000000}, {0, 10000000}};
    timer_settime(t, 0, &its, NULL);
  }
  if (do_fork) {
    pid_t child = fork();
    if (child == 0) {
      spin_child();
      _exit(0);
    }
    waitpid(child, NULL, 0);
  }
  pthread_t waiter_thread;
  if (waits)
    pthread_create(&waiter_thread, NULL, waiter, NULL);
  if (sandboxed)
    sandbox(all_threads);
  pthread_t t[64];
  if (nthreads > 64)
    nthreads = 64;
  for (int i = 0; i < nthreads; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  if (execs > 0) {
    // The workers are still burning (and being sampled) when the image
    // goes: a sample's signal may be pending at the exec.
    spin_main();
    char next[32];
    snprintf(next, sizeof next, "exec=%d", execs - 1);
    argv[exec_arg] = next;
    execv("/proc/self/exe", argv);
    perror("execv");
    return 1;
  }
  for (int i = 0; i < nthreads; i++)
    pthread_join(t[i], NULL);
  spin_main();
  if (waits) {
    kill(getpid(), SIGUSR1);
    pthread_join(waiter_thread, NULL);
  }
  if (own)
    printf("own signals: %d\n", (int)own_signals);
  printf("done\n");
  return 0;
}
