// A chain of calls (main -> chain_a -> chain_b -> chain_c -> chain_d)
// built -O2 without frame pointers, as Debian builds its programs: only
// CFI can walk it. argv[1] rounds (default 1).
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noinline)) void chain_d(int v) { sink += v; }
__attribute__((noinline)) void chain_c(int v) {
  chain_d(v + 1);
  sink++;
}
__attribute__((noinline)) void chain_b(int v) {
  chain_c(v + 1);
  sink++;
}
__attribute__((noinline)) void chain_a(int v) {
  chain_b(v + 1);
  sink++;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  for (int i = 0; i < rounds; i++)
    chain_a(i);
  printf("sink %d\n", sink);
  return 0;
}
