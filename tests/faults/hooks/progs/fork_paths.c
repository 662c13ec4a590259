// Every way a process forks, from code that probes hook: fork(), _Fork(),
// vfork(), posix_spawn(), system(). Each child calls child_work() and
// exits; the parent reaps it and checks its status. argv[1] rounds; with
// argv[2] = "threads" each round runs on a new thread, whose first probe
// hit is then inside the fork. With argv[2] = "raw" each round is a child of
// the raw fork system call (no glibc fork code runs: the child's thread has
// no robust mutex list), with child_work() called in the parent before and
// after it.
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
pid_t _Fork(void);

__attribute__((noinline)) int child_work(int x) {
  __asm__ volatile("" ::: "memory");
  return x;
}

static int reap(pid_t pid, const char *how) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 7) {
    printf("%s: child failed (%d)\n", how, status);
    return 1;
  }
  return 0;
}

static int round_of_forks(void) {
  int bad = 0;
  {
    pid_t p = fork();
    if (p == 0)
      _exit(child_work(7));
    bad += reap(p, "fork");
    p = _Fork();
    if (p == 0)
      _exit(child_work(7));
    bad += reap(p, "_Fork");
    p = vfork();
    if (p == 0)
      _exit(child_work(7));
    bad += reap(p, "vfork");
    char *args[] = {"/bin/sh", "-c", "exit 7", NULL};
    if (posix_spawn(&p, "/bin/sh", NULL, NULL, args, environ) != 0)
      p = -1;
    bad += reap(p, "posix_spawn");
    int s = system("exit 7");
    if (!WIFEXITED(s) || WEXITSTATUS(s) != 7) {
      printf("system: child failed (%d)\n", s);
      bad++;
    }
  }
  return bad;
}

static int raw_fork_round(void) {
  child_work(7);
  pid_t p = (pid_t)syscall(SYS_fork);
  if (p == 0)
    syscall(SYS_exit_group, child_work(7));
  int bad = reap(p, "SYS_fork");
  child_work(7);
  return bad;
}

static void *round_thread(void *arg) {
  *(int *)arg = round_of_forks();
  return NULL;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  int threads = argc > 2 && !strcmp(argv[2], "threads");
  int raw = argc > 2 && !strcmp(argv[2], "raw");
  int bad = 0;
  for (int r = 0; r < rounds; r++) {
    if (raw) {
      bad += raw_fork_round();
      continue;
    }
    if (!threads) {
      bad += round_of_forks();
      continue;
    }
    pthread_t t;
    int result = 1;
    pthread_create(&t, NULL, round_thread, &result);
    pthread_join(t, NULL);
    bad += result;
  }
  printf("forked %d rounds, %d failed\n", rounds, bad);
  return bad != 0;
}
