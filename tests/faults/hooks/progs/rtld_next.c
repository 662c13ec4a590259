// Looks a symbol up past itself (RTLD_NEXT: glibc finds the calling object
// from dlsym's return address), as interposing libraries do.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int ok = 0;
  for (int i = 0; i < 10; i++) {
    pid_t (*next)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "getpid");
    ok += next && next() == getpid();
  }
  printf("RTLD_NEXT found getpid %d times\n", ok);
  return ok != 10;
}
