// A process tree with names: the first process ("family") forks a child
// that renames itself "elder", starts a thread "younger" that calls who(1),
// then forks a grandchild that renames itself "offspring" and calls who(2).
// pcomm and leader_comm read as: younger's parent process is "family" and
// its leader "elder"; offspring's parent is "elder" and it leads itself.
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int who(int step) {
  __asm__ volatile("" : : "r"(step) : "memory");
  return step;
}

static void *younger(void *arg) {
  (void)arg;
  prctl(PR_SET_NAME, "younger", 0, 0, 0);
  who(1);
  return NULL;
}

int main(void) {
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_NAME, "elder", 0, 0, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, younger, NULL) != 0)
      _exit(1);
    pthread_join(t, NULL);
    pid_t grandchild = fork();
    if (grandchild == 0) {
      prctl(PR_SET_NAME, "offspring", 0, 0, 0);
      who(2);
      _exit(0);
    }
    waitpid(grandchild, NULL, 0);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("family done %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
