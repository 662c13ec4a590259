// Threads taking one mutex in turns: argv[1] threads (default 4), argv[2]
// lock/unlock rounds each (default 1000), with a little work while
// holding the lock so that others wait. Prints the total rounds, which
// the scripts' tests compare with the locks counted.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds;
static volatile long shared;

__attribute__((noinline)) static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < rounds; i++) {
    pthread_mutex_lock(&lock);
    for (int j = 0; j < 200; j++)
      shared += j;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int nthreads = argc > 1 ? atoi(argv[1]) : 4;
  rounds = argc > 2 ? atoi(argv[2]) : 1000;
  if (nthreads > 64)
    nthreads = 64;
  pthread_t t[64];
  for (int i = 0; i < nthreads; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < nthreads; i++)
    pthread_join(t[i], NULL);
  printf("rounds %d\n", nthreads * rounds);
  return 0;
}
