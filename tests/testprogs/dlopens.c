// Loads libubtest.so (the one next to this program) with dlopen after
// starting, then calls into it.
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  usleep(100000);
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0)
    return 1;
  path[n] = 0;
  strcpy(strrchr(path, '/') + 1, "libubtest.so");
  void *h = dlopen(path, RTLD_NOW);
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
