// A target that counts its own calls to IFUNC functions of glibc: run()
// calls WHAT (memcpy, strlen, memset, strstr or __memcpy_chk) N times and
// nothing else, so that probes filtered to run()'s duration must count
// exactly N. glibc's memcpy, strlen and memset are resolved through GOT
// slots glibc fills for its own calls; strstr and __memcpy_chk have none.
//
// usage: ifunc_calls WHAT N [wait]   (wait: SIGUSR1 starts run(), for -p)
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);

static char src[128] = "the quick brown fox jumps over the lazy dog";
static char dst[128];
volatile size_t sink;

__attribute__((noinline)) void run(const char *what, int n) {
  for (int i = 0; i < n; i++) {
    size_t len = 16 + (size_t)(i % 32);
    if (strcmp(what, "memcpy") == 0)
      sink += (size_t)memcpy(dst, src, len);
    else if (strcmp(what, "strlen") == 0)
      sink += strlen(src + (i % 8));
    else if (strcmp(what, "memset") == 0)
      sink += (size_t)memset(dst, i, len);
    else if (strcmp(what, "strstr") == 0)
      sink += (size_t)strstr(src, "lazy");
    else if (strcmp(what, "__memcpy_chk") == 0)
      sink += (size_t)__memcpy_chk(dst, src, len, sizeof dst);
  }
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  if (argc > 3) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    printf("ready\n");
    fflush(stdout);
    int sig;
    sigwait(&set, &sig);
  }
  run(argv[1], atoi(argv[2]));
  printf("called %s %s times\n", argv[1], argv[2]);
  return 0;
}
