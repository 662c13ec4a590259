// Functions whose arguments the DWARF tests read by name (`args`, -lv,
// casts to the program's own struct types without C definitions): base
// types, pointers to nested records with arrays, bitfields, unions and
// enums, a double between integers (SSE registers are not argument slots),
// a large struct by value (copied to the stack, slots unaffected), more
// arguments than registers, and typed return values. Built -O2 without
// frame pointers as distro binaries are; argv[1] rounds (default 1).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { RED = 1, GREEN = 2, BLUE = 40 };

struct inner {
  short code;
  char label[8];
};

typedef struct shape {
  int id;
  struct inner in;
  int dims[3];
  unsigned kind : 3, visible : 1, weight : 12;
  enum color color;
  union {
    int as_int;
    float as_float;
  };
  struct shape *next;
} shape_t;

struct big {
  long a, b, c;
};

volatile long sink;

__attribute__((noinline)) int basic(int count, char letter, long *out) {
  *out = count * 2;
  sink += letter;
  return -count;
}

__attribute__((noinline)) enum color paint(shape_t *s, enum color c) {
  sink += s->id;
  return c == RED ? BLUE : c;
}

__attribute__((noinline)) long mixed(int a, double ratio, long b) {
  return a + b + (long)ratio;
}

__attribute__((noinline)) long by_value(struct big v, int after) {
  return v.a + v.c + after;
}

__attribute__((noinline)) long eight(long a1, long a2, long a3, long a4,
                                     long a5, long a6, long a7, long a8) {
  return a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  long out = 0;
  shape_t second = {.id = 2, .in = {.code = -3, .label = "second"}};
  shape_t first = {.id = 1,
                   .in = {.code = 7, .label = "first"},
                   .dims = {10, 20, 30},
                   .kind = 5,
                   .visible = 1,
                   .weight = 1000,
                   .color = GREEN,
                   .as_int = 77,
                   .next = &second};
  long total = 0;
  for (int i = 0; i < rounds; i++) {
    total += basic(i + 3, 'q', &out);
    total += paint(&first, RED);
    total += mixed(4, 2.5, 6);
    total += by_value((struct big){1, 2, 3}, 9);
    total += eight(1, 2, 3, 4, 5, 6, 7, 8);
  }
  printf("total %ld\n", total);
  return 0;
}
