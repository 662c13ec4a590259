// For benchmarks: calls a tiny function N times (argv[1]) and reports the
// time per call, so per-hit probe costs can be taken as the slope over two
// N.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long hot(long x) {
  __asm__ volatile("" : "+r"(x));
  return x + 1;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  long v = 0;
  for (long i = 0; i < n; i++)
    v = hot(v);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
  printf("calls %ld ns %.0f ns/call %.2f\n", v, ns, ns / (double)n);
  return 0;
}
