// What creating tasks costs a program: N pthread_create+join, N
// vfork+_exit+waitpid and N fork+_exit+waitpid, each timed as a whole and
// printed per call in ns. marker() is called once at the end, for a probe
// that makes a tracer attach without firing in the loops.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *nothing(void *arg) {
  return arg;
}

__attribute__((noinline)) int marker(int n) {
  __asm__ volatile("" : : "r"(n) : "memory");
  return n;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  double t0 = now_ns();
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) != 0)
      return 1;
    pthread_join(t, NULL);
  }
  double t1 = now_ns();
  for (int i = 0; i < n; i++) {
    pid_t p = vfork();
    if (p == 0)
      _exit(0);
    waitpid(p, NULL, 0);
  }
  double t2 = now_ns();
  for (int i = 0; i < n; i++) {
    pid_t p = fork();
    if (p == 0)
      _exit(0);
    waitpid(p, NULL, 0);
  }
  double t3 = now_ns();
  printf("thread %.0f vfork %.0f fork %.0f\n", (t1 - t0) / n, (t2 - t1) / n,
         (t3 - t2) / n);
  marker(0);
  return 0;
}
