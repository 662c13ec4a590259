// Children that run on their parent's memory and TLS until they exec: a
// posix_spawn (glibc makes it with a CLONE_VM|CLONE_VFORK clone), a vfork
// whose child calls who(-1) before its exec, and a system() (posix_spawn
// again). The parent calls who(its pid) first, so that whatever the
// probes keep per thread is the parent's when the children start, and
// again at the end; it prints each child's pid as it saw it.
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

__attribute__((noinline)) int who(int n) {
  __asm__ volatile("" : : "r"(n) : "memory");
  return n;
}

int main(void) {
  char *argv[] = {"/bin/true", NULL};
  who(getpid());
  pid_t spawned = 0;
  if (posix_spawn(&spawned, "/bin/true", NULL, NULL, argv, environ) != 0)
    return 1;
  waitpid(spawned, NULL, 0);
  pid_t forked = vfork();
  if (forked == 0) {
    who(-1);
    execv("/bin/true", argv);
    _exit(127);
  }
  waitpid(forked, NULL, 0);
  printf("spawned %d\nvforked %d\n", spawned, forked);
  fflush(stdout);
  if (system("exec /bin/true") != 0)
    return 1;
  who(getpid());
  return 0;
}
