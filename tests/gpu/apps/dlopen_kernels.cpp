// A host program with no CUDA code of its own: it dlopen()s a library of
// kernels (argv[1], libkernel_lib.so) and runs them. ubtrace cannot read
// the kernels' names before the program runs; the agent reports them as it
// instruments the library's module.
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dlopen_kernels LIBRARY [N]\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto run = reinterpret_cast<int (*)(int)>(dlsym(lib, "ubt_kernel_lib_run"));
  if (!run) {
    std::fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  int n = argc > 2 ? std::atoi(argv[2]) : 1000;
  int status = run(n);
  std::printf("ran the library's kernels: status %d\n", status);
  return status == 0 ? 0 : 1;
}
