// Every way a process forks, from code that probes hook: fork(), _Fork(),
// vfork(), posix_spawn(), system(). Each child calls child_work() and
// exits; the parent reaps it and checks its status.
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  int bad = 0;
  for (int r = 0; r < rounds; r++) {
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
  printf("forked %d rounds, %d failed\n", rounds, bad);
  return bad != 0;
}
