/* Maps, at the address given (hex), as much memory as the injector's
 * region, filled with 2s (what the injector would read as "loaded" if it
 * trusted the address), and checks at the end that nobody wrote into it:
 * the injector is told (UBTRACE_TEST_INJECT_REGION) to map its region
 * there, finds it taken, and must go elsewhere without touching this.
 * Prints "ready"; on "q" prints "intact" or "changed at OFFSET"; exits 0
 * or 1. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE 0x43000

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  uintptr_t at = argc > 1 ? strtoull(argv[1], NULL, 16) : 0;
  uint32_t *words =
      mmap((void *)at, SIZE, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (words == MAP_FAILED || (uintptr_t)words != at) {
    printf("cannot map %lx\n", (unsigned long)at);
    return 2;
  }
  for (size_t i = 0; i < SIZE / 4; ++i)
    words[i] = 2;
  printf("ready\n");
  char line[8];
  while (read(0, line, sizeof line) > 0 && line[0] != 'q')
    ;
  for (size_t i = 0; i < SIZE / 4; ++i)
    if (words[i] != 2) {
      printf("changed at 0x%zx\n", i * 4);
      return 1;
    }
  printf("intact\n");
  return 0;
}
