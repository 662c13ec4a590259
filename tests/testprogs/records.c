// Hands C records of several layouts to probed functions: an array of
// structs to walk with pointer arithmetic, a packed struct, bitfields, a
// struct ending in a flexible array member, a struct with floating point
// members. Each function is called once
// per round (argv[1] rounds, default 1). The USDT probe rec:step has two
// locations (one probe, two sites); rec:const_u32 and rec:const_i8 sit
// side by side (their nops one byte apart), with constant arguments.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

struct pair {
  uint32_t a;
  uint64_t b;
};

struct __attribute__((packed)) packed {
  char tag;
  int32_t value;
  int16_t small;
};

struct flags {
  unsigned short low : 4, mid : 8, top : 3, bit : 1;
  int wide : 20, sign : 12;
};

struct tail {
  int count;
  int items[];
};

struct measure {
  int id;
  float ratio;
  double mean;
  short last;
};

__attribute__((noinline)) void walk(struct pair *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    p[i].a += 0;
  DTRACE_PROBE1(rec, step, n);
}
__attribute__((noinline)) int take_packed(struct packed *p) {
  return p->value;
}
__attribute__((noinline)) int take_flags(struct flags *f) {
  return f->mid;
}
__attribute__((noinline)) int take_tail(struct tail *t) {
  return t->count;
}
__attribute__((noinline)) int take_measure(struct measure *m) {
  return m->id;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  struct pair pairs[5];
  for (int i = 0; i < 5; i++) {
    pairs[i].a = (uint32_t)i;
    pairs[i].b = 10u * (uint64_t)(i + 1);
  }
  struct packed pk = {'k', -123456, 321};
  struct flags fl = {9, 200, 5, 1, 70000, 1000};
  struct tail *t = malloc(sizeof *t + 3 * sizeof(int));
  t->count = 3;
  for (int i = 0; i < 3; i++)
    t->items[i] = 100 + i;
  long sum = 0;
  for (int r = 0; r < rounds; r++) {
    walk(pairs, 5);
    struct measure me = {7, 0.5f, 2.25, -3};
    sum += take_packed(&pk) + take_flags(&fl) + take_tail(t) -
           take_measure(&me) + 7;
    DTRACE_PROBE1(rec, step, r);
    DTRACE_PROBE1(rec, const_u32, (uint32_t)0xf3f2f1f0u);
    DTRACE_PROBE1(rec, const_i8, (int8_t)-16);
  }
  printf("records %ld\n", sum);
  free(t);
  return 0;
}
