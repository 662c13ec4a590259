// Calls a libc function that a library it links wraps (wrap_lib.c).
#include <stdio.h>
#include <unistd.h>

extern long wrapped_calls;

__attribute__((noinline)) int ask(void) { return getppid() > 0; }

int main(void) {
  int ok = 0;
  for (int i = 0; i < 3; i++)
    ok += ask();
  printf("asked %d, wrapped %ld\n", ok, wrapped_calls);
  return 0;
}
