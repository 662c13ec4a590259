// Loads libcalls_back.so (argv[1]) with dlopen after the trace attached and
// calls callback() through it, then waits for FILE (argv[2]) to exist: the
// trace ends while it lives.
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int callback(int x) {
  __asm__ volatile("" : : "r"(x) : "memory");
  return x;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h)
    return 1;
  int (*calls_back)(int (*)(int), int) =
      (int (*)(int (*)(int), int))dlsym(h, "lib_calls_back");
  int s = 0;
  for (int i = 0; i < 3; i++)
    s += calls_back(callback, i);
  printf("called back %d\n", s);
  fflush(stdout);
  while (access(argv[2], F_OK) != 0)
    usleep(1000);
  return 0;
}
