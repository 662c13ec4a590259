/* Loads CUDA code through the driver (dlopen("libcuda.so.1"), the
 * stand-in in tests), as CUDA programs do, when told to: prints
 * "ready <pid>", reads a line on stdin, calls cuModuleLoadData with a
 * small PTX module, prints "loaded <result>" and exits 0. The agent's GPU
 * half wakes up at that load. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

volatile unsigned long g_sum;
__attribute__((noinline)) void chan_work(unsigned long i) {
  g_sum += i;
}

static const char kPtx[] = ".version 7.0\n"
                           ".target sm_90\n"
                           ".address_size 64\n"
                           ".visible .entry chan_kernel()\n"
                           "{\n"
                           "  ret;\n"
                           "}\n";

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  chan_work(1);
  printf("ready %d\n", getpid());
  char line[64];
  if (!fgets(line, sizeof line, stdin))
    return 5;
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!cuda) {
    printf("no driver: %s\n", dlerror());
    return 3;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
  int (*load)(void **, const void *) =
      (int (*)(void **, const void *))dlsym(cuda, "cuModuleLoadData");
  if (!init || !load) {
    printf("no entry points\n");
    return 4;
  }
  init(0);
  void *module = NULL;
  printf("loaded %d\n", load(&module, kPtx));
  chan_work(2);
  return 0;
}
