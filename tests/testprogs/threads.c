// Several threads calling the same function: argv[1] threads, argv[2]
// calls each. Prints the total so tests can compare counts.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int calls_per_thread;

__attribute__((noinline)) long tick(long x) { return x + 1; }

static void *worker(void *arg) {
  long v = 0;
  for (int i = 0; i < calls_per_thread; i++)
    v = tick(v);
  return (void *)v;
}

int main(int argc, char **argv) {
  int nthreads = argc > 1 ? atoi(argv[1]) : 4;
  calls_per_thread = argc > 2 ? atoi(argv[2]) : 1000;
  pthread_t t[64];
  if (nthreads > 64)
    nthreads = 64;
  for (int i = 0; i < nthreads; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  long total = 0;
  for (int i = 0; i < nthreads; i++) {
    void *r;
    pthread_join(t[i], &r);
    total += (long)r;
  }
  printf("total %ld\n", total);
  return 0;
}
