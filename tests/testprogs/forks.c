// Forks a child that calls the probed function too, then execs /bin/true;
// the parent waits. Tracing must not crash either.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int in_both(int who) {
  __asm__ volatile("" : : "r"(who) : "memory");
  return who;
}

int main(void) {
  in_both(1);
  pid_t c = fork();
  if (c == 0) {
    in_both(2);
    execl("/bin/true", "true", (char *)NULL);
    _exit(127);
  }
  int st = 0;
  waitpid(c, &st, 0);
  in_both(3);
  printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}
