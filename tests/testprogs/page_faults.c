// page_faults PAGES THREADS [close | until=PATH]: the main thread and
// THREADS threads started after it (so after a trace attached with -c)
// each touch PAGES fresh pages in touch_pages, one page fault each (huge
// pages off), then the program prints how many pages were touched in all.
// With "close" the main thread first closes every descriptor above 2, as
// daemons do; with until=PATH it touches PAGES pages again and again until
// PATH exists (a target for -p), and counts them once. A second line
// gives the nanoseconds the main thread's first touch_pages took per page
// (bench/perf_events.py).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long pages;

__attribute__((noinline)) long touch_pages(long n) {
  char *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return 0;
  madvise(p, n * 4096, MADV_NOHUGEPAGE);
  long touched = 0;
  for (long i = 0; i < n; i++) {
    ((volatile char *)p)[i * 4096] = 1;
    touched++;
  }
  munmap(p, n * 4096);
  return touched;
}

static void *worker(void *arg) {
  (void)arg;
  return (void *)touch_pages(pages);
}

int main(int argc, char **argv) {
  pages = argc > 1 ? atol(argv[1]) : 1000;
  int threads = argc > 2 ? atoi(argv[2]) : 0;
  if (argc > 3 && strcmp(argv[3], "close") == 0)
    syscall(SYS_close_range, 3, ~0u, 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long total = touch_pages(pages);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
  if (argc > 3 && strncmp(argv[3], "until=", 6) == 0) {
    struct stat st;
    while (stat(argv[3] + 6, &st) != 0)
      touch_pages(pages);
  }
  pthread_t t[64];
  if (threads > 64)
    threads = 64;
  for (int i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) {
    void *r;
    pthread_join(t[i], &r);
    total += (long)r;
  }
  printf("touched %ld\n", total);
  printf("ns per page %ld\n", pages > 0 ? ns / pages : 0);
  return 0;
}
