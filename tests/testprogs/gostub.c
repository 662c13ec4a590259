// Looks like a Go program to ubtrace: it has the section Go's linker writes
// its function table to (.gopclntab). Probes on it must be refused with a
// clear message, not attached.
#include <stdio.h>

__attribute__((used, section(".gopclntab"))) static const char pclntab[16] =
    "not a real table";

__attribute__((noinline)) int work(int x) { return x * 2; }

int main(void) {
  printf("work %d\n", work(21));
  return 0;
}
