#include <stdio.h>
int ubtest_square(int);
int ubtest_sum(int, int);
int main(void) {
  int s = 0;
  for (int i = 0; i < 5; i++)
    s = ubtest_sum(s, ubtest_square(i));
  printf("sum %d\n", s);
  return 0;
}
