/* Prints "tick N" every millisecond until a byte arrives on stdin (or
 * until max ticks, if given), then "done ticks=N" and exits 0. A target for
 * injection into a single-threaded program: it spends its time in poll,
 * usleep and printf. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long max = argc > 1 ? atol(argv[1]) : -1;
  setvbuf(stdout, NULL, _IOLBF, 0);
  long tick = 0;
  for (;; ++tick) {
    if (max >= 0 && tick >= max)
      break;
    printf("tick %ld\n", tick);
    struct pollfd in = {0, POLLIN, 0};
    if (poll(&in, 1, 0) > 0)
      break;
    usleep(1000);
  }
  printf("done ticks=%ld\n", tick);
  return 0;
}
