// Allocates and frees in a known pattern: leak_some() mallocs argv[1]
// blocks (default 100) of 4242 bytes and frees all but every fifth, so
// argv[1] / 5 blocks stay allocated at exit; churn() mallocs and frees
// 50 blocks of 100 bytes and calloc/realloc one block each.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *kept[1000];
static int nkept;

__attribute__((noinline)) static void leak_some(int n) {
  for (int i = 0; i < n; i++) {
    char *p = malloc(4242);
    memset(p, i, 4242);
    if (i % 5 == 0 && nkept < 1000)
      kept[nkept++] = p; // never freed
    else
      free(p);
  }
}

__attribute__((noinline)) static void churn(void) {
  for (int i = 0; i < 50; i++) {
    void *p = malloc(100);
    free(p);
  }
  int *c = calloc(16, sizeof(int)); // 64 bytes
  c = realloc(c, 8192);
  free(c);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  leak_some(n);
  churn();
  printf("kept %d blocks of 4242 bytes\n", nkept);
  return 0;
}
