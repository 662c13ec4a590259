// Functions the compiler calls its own way: a static function every call
// of which it sees passes a constant and an argument it never reads, so
// clang drops them from the signature (DW_CC_nocall: `by` becomes a
// constant in the DWARF, `unused` has no location) and GCC makes a clone
// (scaled.constprop.0) whose parameters are in another order. `args` must
// follow the DWARF locations, not the System V slots. Built -O2.
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) static long scaled(long x, int by, long unused) {
  sink = x;
  return x * by;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  long total = 0;
  for (int i = 0; i < rounds; i++)
    total += scaled(i + 1, 3, 99);
  printf("total %ld\n", total);
  return 0;
}
