// Calls a few functions a given number of times (argv[1], default 10),
// then prints a checksum. The probed functions are not inlined.
#include <stdio.h>
#include <stdlib.h>

// Data for uaddr(): a counter add() bumps, and a table.
long add_calls;
int weights[4] = {3, 5, 7, 11};

__attribute__((noinline)) int add(int a, int b) {
  add_calls++;
  return a + b;
}
__attribute__((noinline)) long mul3(long a, long b, long c) { return a * b * c; }
__attribute__((noinline)) long seven_args(long a, long b, long c, long d, long e,
                                          long f, long g) {
  return a + b + c + d + e + f + g;
}
__attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) int neg(int x) { return -x; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  long sum = 0;
  for (int i = 0; i < n; i++) {
    sum += add(i, 1);
    sum += mul3(i, 2, 3);
    sum += seven_args(1, 2, 3, 4, 5, 6, i);
  }
  sum += fib(10);
  sum += neg(5);
  printf("checksum %ld\n", sum);
  return 0;
}
