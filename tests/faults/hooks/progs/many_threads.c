// argv[1] threads alive at once (64 KiB stacks), each calling hit(i) once
// while all the others are alive too (a barrier before and after), then
// exiting. Prints the sum the program computed itself. With argv[2] =
// "warm" the main thread first calls hit(1) .. hit(7) (not in the sum).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long hit(long i) {
  __asm__ volatile("" ::: "memory");
  return i;
}

static pthread_barrier_t before, after;
static long (*volatile hit_fn)(long) = hit;

static void *worker(void *arg) {
  pthread_barrier_wait(&before);
  long r = hit_fn((long)arg);
  pthread_barrier_wait(&after);
  return (void *)r;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  if (argc > 2 && argv[2][0] == 'w')
    for (long i = 1; i <= 7; i++)
      hit_fn(i);
  pthread_t *t = calloc(n, sizeof *t);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&before, NULL, n);
  pthread_barrier_init(&after, NULL, n);
  for (int i = 0; i < n; i++)
    if (pthread_create(&t[i], &attr, worker, (void *)(long)(i + 1)) != 0) {
      fprintf(stderr, "cannot create thread %d\n", i);
      return 2;
    }
  long sum = 0;
  for (int i = 0; i < n; i++) {
    void *r;
    pthread_join(t[i], &r);
    sum += (long)r;
  }
  printf("threads %d sum %ld\n", n, sum);
  return 0;
}
