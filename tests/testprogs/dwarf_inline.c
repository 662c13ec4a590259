// Two levels of inlined functions between a probed function and its
// caller (middle -> outer -> inner -> leaf), for stacks that list every
// inlined level as bpftrace does.
#include <stdio.h>

volatile int sink;

__attribute__((noinline)) void leaf(int v) { sink += v; }

static inline __attribute__((always_inline)) void inner(int v) {
  leaf(v * 2);
  sink += 1;
}

static inline __attribute__((always_inline)) void outer(int v) {
  inner(v + 1);
  sink += 2;
}

__attribute__((noinline)) void middle(int v) { outer(v); }

int main(void) {
  middle(3);
  printf("sink %d\n", sink);
  return 0;
}
