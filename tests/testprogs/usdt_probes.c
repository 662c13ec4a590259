// USDT probes (systemtap's sys/sdt.h), one of them behind a semaphore.
#include <stdio.h>
#include <stdlib.h>
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

// With semaphores on, every probe of the file has one; "gated" checks its
// own before doing the work of computing its argument.
unsigned short ubt_loop_semaphore __attribute__((section(".probes")));
unsigned short ubt_gated_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) void work(int i, const char *tag) {
  DTRACE_PROBE2(ubt, loop, i, tag);
  if (ubt_gated_semaphore)
    DTRACE_PROBE1(ubt, gated, i * 10);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5;
  for (int i = 0; i < n; i++)
    work(i, i % 2 ? "odd" : "even");
  printf("gated enabled: %d\n", ubt_gated_semaphore ? 1 : 0);
  return 0;
}
