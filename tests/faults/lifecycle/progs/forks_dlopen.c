// A forked child dlopens a library whose probes wait for it, and calls
// into it; then the parent, once the child is gone, does the same. The
// child's copy of the agent has no CLI (its session is the parent's): it
// must neither wait for one nor speak on the parent's channel, so that the
// parent's own load is hooked before its calls.
//
//   forks_dlopen LIBRARY
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int call_square(const char *lib, int first, int n) {
  void *h = dlopen(lib, RTLD_NOW);
  if (!h)
    return -1;
  int (*square)(int) = (int (*)(int))dlsym(h, "ubtest_square");
  int s = 0;
  for (int i = 0; i < n; i++)
    s += square(first + i);
  return s;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  pid_t c = fork();
  if (c == 0)
    _exit(call_square(argv[1], 1, 2) < 0 ? 1 : 0);
  int status = 0;
  waitpid(c, &status, 0);
  int s = call_square(argv[1], 100, 3);
  printf("child %d parent %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
         s);
  return 0;
}
