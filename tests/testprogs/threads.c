// Several threads calling the same function: argv[1] threads, argv[2]
// calls each. Prints the total so tests can compare counts.
//
//   threads N CALLS until PATH
// calls on, CALLS at a time, until the file PATH exists (a test touches
// it when it is done), then prints the total and whether every thread's
// result is its own count of calls (`results right`): a hook that lost or
// doubled a call, or corrupted a register, shows there.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int calls_per_thread;
static const char *until_path;
static volatile int stop;

__attribute__((noinline)) long tick(long x) {
  return x + 1;
}

struct worker_result {
  long value; // what tick() made of 0, called `calls` times
  long calls;
};

static void *worker(void *arg) {
  struct worker_result *r = arg;
  long v = 0, calls = 0;
  do {
    for (int i = 0; i < calls_per_thread; i++)
      v = tick(v);
    calls += calls_per_thread;
  } while (until_path && !stop);
  r->value = v;
  r->calls = calls;
  return NULL;
}

int main(int argc, char **argv) {
  int nthreads = argc > 1 ? atoi(argv[1]) : 4;
  calls_per_thread = argc > 2 ? atoi(argv[2]) : 1000;
  if (argc > 4 && strcmp(argv[3], "until") == 0)
    until_path = argv[4];
  pthread_t t[64];
  struct worker_result r[64];
  if (nthreads > 64)
    nthreads = 64;
  for (int i = 0; i < nthreads; i++)
    pthread_create(&t[i], NULL, worker, &r[i]);
  if (until_path) {
    while (access(until_path, F_OK) != 0)
      usleep(10000);
    stop = 1;
  }
  long total = 0;
  int right = 1;
  for (int i = 0; i < nthreads; i++) {
    pthread_join(t[i], NULL);
    total += r[i].value;
    right &= r[i].value == r[i].calls;
  }
  printf("total %ld\n", total);
  if (until_path)
    printf(right ? "results right\n" : "results WRONG\n");
  return 0;
}
