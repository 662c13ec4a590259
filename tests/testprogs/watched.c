// watched MODE ...: a target for watchpoint probes, its watched memory at
// fixed addresses (a page mapped at 0x10000000):
//   check            exits 0 if this machine's hardware breakpoints fire
//                    (a write and an instruction breakpoint on the
//                    program's own memory, counted), 1 if they do not
//                    (a virtual machine that does not pass them on)
//   write N [T]      the main thread, then T threads started after it,
//                    each store N values at 0x10000000 in store_value;
//                    prints "stored TOTAL"
//   exec N           calls the function at 0x10001000 (a `ret`) N times;
//                    prints "called N"
//   until PATH       stores at 0x10000000 every millisecond until PATH
//                    exists (a target for -p); prints "stored"
#define _GNU_SOURCE
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WATCHED ((volatile uint64_t *)0x10000000)
#define CODE ((void *)0x10001000)

static long per_thread;

__attribute__((noinline)) void store_value(uint64_t v) {
  *WATCHED = v;
}

static void *storer(void *arg) {
  (void)arg;
  for (long i = 0; i < per_thread; i++)
    store_value((uint64_t)i);
  return NULL;
}

static int map_pages(void) {
  void *p =
      mmap((void *)0x10000000, 2 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p != (void *)0x10000000) {
    perror("mmap 0x10000000");
    return -1;
  }
  *(volatile uint8_t *)CODE = 0xc3; // ret
  return 0;
}

// How many times a breakpoint of this thread fired while `run` ran.
static long count_breakpoint(uint32_t type, uint64_t addr, uint64_t len,
                             void (*run)(void)) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_BREAKPOINT;
  a.bp_type = type;
  a.bp_addr = addr;
  a.bp_len = len;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd < 0)
    return -1;
  run();
  long long n = 0;
  if (read(fd, &n, sizeof n) != (ssize_t)sizeof n)
    n = -1;
  close(fd);
  return (long)n;
}

static void ten_stores(void) {
  for (int i = 0; i < 10; i++)
    store_value((uint64_t)i);
}

static void ten_calls(void) {
  for (int i = 0; i < 10; i++)
    ((void (*)(void))CODE)();
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "write";
  if (map_pages() != 0)
    return 2;
  if (!strcmp(mode, "check")) {
    long w = count_breakpoint(HW_BREAKPOINT_W, 0x10000000, 8, ten_stores);
    long x =
        count_breakpoint(HW_BREAKPOINT_X, 0x10001000, sizeof(long), ten_calls);
    printf("write breakpoint %ld, instruction breakpoint %ld (of 10)\n", w, x);
    return w == 10 && x == 10 ? 0 : 1;
  }
  if (!strcmp(mode, "write")) {
    per_thread = argc > 2 ? atol(argv[2]) : 1000;
    int threads = argc > 3 ? atoi(argv[3]) : 0;
    storer(NULL);
    pthread_t t[64];
    if (threads > 64)
      threads = 64;
    for (int i = 0; i < threads; i++)
      pthread_create(&t[i], NULL, storer, NULL);
    for (int i = 0; i < threads; i++)
      pthread_join(t[i], NULL);
    printf("stored %ld\n", per_thread * (threads + 1));
    return 0;
  }
  if (!strcmp(mode, "exec")) {
    long n = argc > 2 ? atol(argv[2]) : 1000;
    for (long i = 0; i < n; i++)
      ((void (*)(void))CODE)();
    printf("called %ld\n", n);
    return 0;
  }
  if (!strcmp(mode, "until") && argc > 2) {
    struct timespec ms = {0, 1000000};
    for (uint64_t i = 0; access(argv[2], F_OK) != 0; i++) {
      store_value(i);
      nanosleep(&ms, NULL);
    }
    printf("stored\n");
    return 0;
  }
  fprintf(stderr, "usage: watched check | write N [T] | exec N | until PATH\n");
  return 2;
}
