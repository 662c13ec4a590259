// Passes strings and structs to functions, for str(), buf() and field
// access through pointers.
#include <stdio.h>
#include <string.h>

struct point {
  int x;
  int y;
  char name[16];
  struct point *next;
};

__attribute__((noinline)) size_t greet(const char *who) { return strlen(who); }
__attribute__((noinline)) int visit(struct point *p) { return p->x + p->y; }
__attribute__((noinline)) void bytes(const unsigned char *b, int n) {
  __asm__ volatile("" : : "r"(b), "r"(n) : "memory");
}

// Results go here so the calls cannot be dropped as dead code.
volatile long sink;

int main(void) {
  // On the stack, so the pages are in memory (the kernel's uprobes cannot
  // read pages not yet faulted in; Debian's bpftrace is the oracle here).
  char who[2][48];
  strcpy(who[0], "world");
  strcpy(who[1], "a somewhat longer name that goes on");
  sink += greet(who[0]);
  sink += greet(who[1]);
  struct point b = {3, 4, "second", NULL};
  struct point a = {1, 2, "first", &b};
  sink += visit(&a);
  unsigned char raw[8] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3};
  bytes(raw, 8);
  // A bad pointer: the program never dereferences it, probes must read it
  // safely.
  bytes((const unsigned char *)0x10, 4);
  printf("done\n");
  return 0;
}
