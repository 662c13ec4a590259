/* A long-running target for -p: prints "ready <pid>", then calls
 * chan_work() every millisecond until a line arrives on stdin (or stdin
 * closes), prints "done <calls>" and exits 0. */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

volatile unsigned long g_sum;

__attribute__((noinline)) void chan_work(unsigned long i) {
  g_sum += i;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready %d\n", getpid());
  unsigned long calls = 0;
  for (;;) {
    chan_work(calls++);
    struct pollfd p = {0, POLLIN, 0};
    if (poll(&p, 1, 1) > 0)
      break;
  }
  printf("done %lu\n", calls);
  return 0;
}
