/* N threads malloc and free blocks too big for the thread cache in a tight
 * loop, so each of them spends much of its time holding its arena's lock:
 * the case where calling into glibc from an interrupted thread would
 * deadlock. The main thread waits in pthread_join (inside glibc), so only
 * busy threads can be borrowed.
 *   SIGUSR1: thread 0 prints "counts c0 c1 ..." (each thread's loops).
 *   SIGTERM: all stop; main prints "done" and exits 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16
static int g_threads = 4;
static atomic_long g_counts[MAX_THREADS];
static volatile sig_atomic_t g_report, g_stop;

static void on_usr1(int sig) {
  g_report = 1;
}
static void on_term(int sig) {
  g_stop = 1;
}

static void report(void) {
  char line[512];
  int used = snprintf(line, sizeof line, "counts");
  for (int i = 0; i < g_threads; ++i)
    used += snprintf(line + used, sizeof line - (size_t)used, " %ld",
                     atomic_load(&g_counts[i]));
  printf("%s\n", line);
  fflush(stdout);
}

static void *worker(void *arg) {
  int index = (int)(long)arg;
  size_t size = 1536 + (size_t)index * 512;
  while (!g_stop) {
    size = size > 96 * 1024 ? 1536 : size + 4096;
    volatile char *block = malloc(size);
    for (size_t i = 0; i < size; i += 64)
      block[i] = (char)i;
    free((void *)block);
    atomic_fetch_add_explicit(&g_counts[index], 1, memory_order_relaxed);
    if (index == 0 && g_report) {
      g_report = 0;
      report();
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1)
    g_threads = atoi(argv[1]);
  if (g_threads < 1 || g_threads > MAX_THREADS)
    return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  pthread_t threads[MAX_THREADS];
  for (int i = 0; i < g_threads; ++i)
    pthread_create(&threads[i], NULL, worker, (void *)(long)i);
  printf("ready\n");
  fflush(stdout);
  for (int i = 0; i < g_threads; ++i)
    pthread_join(threads[i], NULL);
  report();
  printf("done\n");
  return 0;
}
