// work() called from two places at different rates: from hot() nine times
// in ten rounds (with small arguments), from cold() once (with large
// ones). Profiles of it must put hot() on 90% of the calls and cold() on
// 100 * 1000 of the argument sum. argv[1] rounds (default 100).
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void work(long n) {
  for (long i = 0; i < n; i++)
    sink += i;
}

__attribute__((noinline)) void hot(int i) { work(100 + i % 7); }

__attribute__((noinline)) void cold(int i) { work(1000); }

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < rounds; i++) {
    if (i % 10 == 9)
      cold(i);
    else
      hot(i);
  }
  printf("sink %ld\n", sink);
  return 0;
}
