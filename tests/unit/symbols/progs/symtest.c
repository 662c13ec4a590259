// A C program whose functions the symbol tests look up. It prints where
// its functions are at run time ("NAME ADDRESS" lines, then "ready"), and
// waits for its stdin to close before exiting, so a test can read its
// /proc/PID/maps meanwhile.
#include <stdio.h>

#define PROBED __attribute__((noinline, used))

PROBED int ubt_add(int a, int b) {
  return a + b; // UBT_ADD_BODY
}
PROBED static int ubt_static_helper(int x) {
  return x * 3;
}
PROBED int ubt_alias_target(int x) {
  return x + 1;
}
int ubt_alias(int x) __attribute__((alias("ubt_alias_target")));
PROBED int ubt_read_one(void) {
  return 1;
}
PROBED int ubt_read_two(void) {
  return 2;
}
PROBED int ubt_reader(void) {
  return 3;
}

// An address inside code inlined into ubt_outer (the lea of the asm).
static inline __attribute__((always_inline)) void *ubt_inlined_here(void) {
  void *p;
  __asm__ volatile("1: lea 1b(%%rip), %0" : "=r"(p)); // UBT_INLINED_LINE
  return p;
}
PROBED void *ubt_outer(void) {
  return ubt_inlined_here(); // UBT_CALL_SITE
}

// Where ubt_caller returns to in main: a return address a stack would hold.
static void *return_address;
PROBED void ubt_caller(void) {
  return_address = __builtin_return_address(0);
}

int main(void) {
  ubt_caller();
  printf("ubt_add %p\n", (void *)ubt_add);
  printf("ubt_static_helper %p\n", (void *)ubt_static_helper);
  printf("ubt_alias_target %p\n", (void *)ubt_alias_target);
  printf("ubt_alias %p\n", (void *)ubt_alias);
  printf("ubt_read_one %p\n", (void *)ubt_read_one);
  printf("ubt_read_two %p\n", (void *)ubt_read_two);
  printf("ubt_reader %p\n", (void *)ubt_reader);
  printf("main %p\n", (void *)main);
  printf("return_address %p\n", return_address);
  printf("inlined_pc %p\n", ubt_outer());
  printf("ready\n");
  fflush(stdout);
  while (getchar() != EOF) {
  }
  return ubt_add(1, 2) + ubt_static_helper(1) + ubt_alias(1) + ubt_read_one() +
             ubt_read_two() + ubt_reader() ==
         0;
}
