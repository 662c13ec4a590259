// A library that wraps a libc function the way interposers do: its own
// definition finds the real one with dlsym(RTLD_NEXT, ...), which must be
// the definition after this library, whatever else wraps dlsym.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

long wrapped_calls;

pid_t getppid(void) {
  static pid_t (*real)(void);
  if (!real)
    real = (pid_t(*)(void))dlsym(RTLD_NEXT, "getppid");
  wrapped_calls++;
  return real ? real() : -1;
}
