// Uses libubtsym.so; prints where its functions are, then waits for EOF.
#include <stdio.h>

void ubt_lib_report(void);
int ubt_lib_func(int);

int main(void) {
  ubt_lib_report();
  printf("ready\n");
  fflush(stdout);
  while (getchar() != EOF) {
  }
  return ubt_lib_func(1) == 0;
}
