// A shared library for library resolution and symbolisation tests.
#include <stdio.h>

__attribute__((noinline)) int ubt_lib_func(int x) {
  return x * 7;
}
__attribute__((noinline)) int ubt_lib_other(int x) {
  return x - 7;
}

void ubt_lib_report(void) {
  // Taken inside the library, so the address is the function itself even
  // when the executable is not position independent (no canonical PLT).
  printf("ubt_lib_func %p\n", (void *)ubt_lib_func);
  printf("ubt_lib_other %p\n", (void *)ubt_lib_other);
}
