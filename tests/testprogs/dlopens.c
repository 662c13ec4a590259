// Loads libubtest.so with dlopen after starting, then calls into it.
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  usleep(100000);
  void *h = dlopen(UBTEST_LIB, RTLD_NOW);
  if (!h) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*square)(int) = (int (*)(int))dlsym(h, "ubtest_square");
  int s = 0;
  for (int i = 0; i < 3; i++)
    s += square(i + 1);
  printf("squares %d\n", s);
  return 0;
}
