// A traced program that ends in a chosen way, after calling the probed
// function work():
//
//   ends_badly MODE N [PROG ARGS...]
//                              calls work() N times, then ends by MODE
//   ends_badly --fork MODE [PROG ARGS...]
//                              forks a worker and prints its pid; the worker
//                              calls work() until SIGUSR1, once more, then
//                              ends by MODE; this parent never reaps it
//                              (the worker stays a zombie) and waits for
//                              SIGTERM
//
// MODE: exit3 (exit code 3), segv (null write), abort, kill (raise SIGKILL),
// thread-segv (a second thread crashes while the first is in work()),
// wait (the worker waits for SIGKILL, calling work()), exec (runs PROG ARGS:
// the process lives on without the agent's channel), fork-exec (forks a
// child that waits for its parent's death, then runs PROG ARGS), closefds
// (closes every descriptor from 3 up with a raw close_range, calls work()
// five times 20 ms apart, exits 0).
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;

__attribute__((noinline)) int work(int i) {
  __asm__ volatile("" : : "r"(i) : "memory");
  return i + 1;
}

static void *crasher(void *arg) {
  (void)arg;
  *(volatile int *)0 = 1;
  return NULL;
}

static void end_by(const char *mode, char **exec_argv) {
  fflush(stdout);
  if (!strcmp(mode, "fork-exec") && exec_argv[0]) {
    if (fork() == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (;;)
        pause();
    }
    mode = "exec";
  }
  if (!strcmp(mode, "exec") && exec_argv[0]) {
    execv(exec_argv[0], exec_argv);
    exit(101);
  }
  if (!strcmp(mode, "closefds")) {
    syscall(SYS_close_range, 3u, ~0u, 0u);
    for (int i = 0; i < 5; i++) {
      work(i);
      struct timespec step = {0, 20000000};
      nanosleep(&step, NULL);
    }
    exit(0);
  }
  if (!strcmp(mode, "exit3"))
    exit(3);
  if (!strcmp(mode, "segv"))
    *(volatile int *)0 = 1;
  if (!strcmp(mode, "abort"))
    abort();
  if (!strcmp(mode, "kill"))
    raise(SIGKILL);
  if (!strcmp(mode, "thread-segv")) {
    pthread_t t;
    pthread_create(&t, NULL, crasher, NULL);
    for (int i = 0;; i++)
      work(i);
  }
  if (!strcmp(mode, "wait"))
    for (int i = 0;; i++) {
      work(i);
      usleep(1000);
    }
  exit(100); // unknown mode
}

static void on_usr1(int sig) {
  (void)sig;
  g_stop = 1;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "--fork")) {
    signal(SIGUSR1, on_usr1);
    pid_t child = fork();
    if (child == 0) {
      for (int i = 0; !g_stop; i++) {
        work(i);
        usleep(1000);
      }
      work(-1); // after the trace attached: at least one hit
      end_by(argv[2], argv + 3);
    }
    printf("%d\n", (int)child);
    fflush(stdout);
    for (;;)
      pause(); // never waits for the child
  }
  if (argc < 3)
    return 2;
  int n = atoi(argv[2]);
  for (int i = 0; i < n; i++)
    work(i);
  end_by(argv[1], argv + 3);
  return 0;
}
