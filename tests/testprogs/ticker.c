// Lives argv[1] milliseconds (default 1000), calling tick() once a
// millisecond: a target for -p tests that must outlive the attach and
// then exit on its own. With "noterm" as argv[2] it ignores SIGTERM (a
// command that a tracer must kill at the end).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile long ticks;

__attribute__((noinline)) void tick(long n) {
  __asm__ volatile("" : : "r"(n) : "memory");
  ticks++;
}

int main(int argc, char **argv) {
  long ms = argc > 1 ? atol(argv[1]) : 1000;
  if (argc > 2 && !strcmp(argv[2], "noterm"))
    signal(SIGTERM, SIG_IGN);
  struct timespec step = {0, 1000000};
  for (long i = 0; i < ms; i++) {
    tick(i);
    nanosleep(&step, NULL);
  }
  printf("ticks %ld\n", ticks);
  return 0;
}
