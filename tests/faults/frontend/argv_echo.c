// A hostile target for return probes on entries that never return: prints
// its argc and arguments (a return probe on _start overwrote argc, the word
// at the top of the stack at the ELF entry), calls a function that returns,
// and ends through exit(), which never returns.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int twice(int x) { return 2 * x; }

__attribute__((noinline, noreturn)) void finish(int code) {
  fflush(stdout);
  exit(code);
}

int main(int argc, char **argv) {
  printf("argc %d", argc);
  for (int i = 1; i < argc; i++)
    printf(" %s", argv[i]);
  printf("\ntwice %d\n", twice(argc));
  finish(0);
}
