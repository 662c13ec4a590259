// For benchmarks: calls a tiny function N times (argv[1]) from T threads
// (argv[2], default 1), and reports the loop's wall time per call and the
// process's resident memory, so a probe's per-hit cost can be taken as the
// slope over two N, and the agent's memory as the difference in RSS.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) long hot(long x) {
  __asm__ volatile("" : "+r"(x));
  return x + 1;
}

static long calls_per_thread;

static void *worker(void *arg) {
  long v = 0;
  for (long i = 0; i < calls_per_thread; i++)
    v = hot(v);
  return (void *)v;
}

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0)
      kb = atol(line + 6);
  if (f)
    fclose(f);
  return kb;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (threads < 1 || threads > 64)
    threads = 1;
  calls_per_thread = n / threads;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_t t[64];
  for (int i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  long v = 0;
  for (int i = 0; i < threads; i++) {
    void *r;
    pthread_join(t[i], &r);
    v += (long)r;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
  printf("calls %ld ns %.0f ns/call %.2f rss_kb %ld\n", v, ns, ns / (double)v, rss_kb());
  return 0;
}
