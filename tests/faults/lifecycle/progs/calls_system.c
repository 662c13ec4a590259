// Calls system() N times (argv[1], default 100), each time after a probed
// function, flushing its own output first so that the lines keep their
// order: a traced program that runs commands, as shells and daemons do.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int before_system(int i) {
  __asm__ volatile("" : : "r"(i) : "memory");
  return i;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  char cmd[64];
  for (int i = 0; i < n; i++) {
    before_system(i);
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "echo child %d", i);
    if (system(cmd) != 0)
      return 1;
  }
  printf("done\n");
  return 0;
}
