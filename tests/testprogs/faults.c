// Hands probes pointers that are not readable: NULL, a freed mapping, a
// kernel address. The program never dereferences them itself.
#include <stdio.h>
#include <sys/mman.h>

__attribute__((noinline)) int take(const char *p) {
  __asm__ volatile("" : : "r"(p) : "memory");
  return p != 0;
}

int main(void) {
  take(NULL);
  char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(m, 4096);
  take(m);
  take((const char *)0xffff800000000000ull);
  take("fine");
  printf("survived\n");
  return 0;
}
