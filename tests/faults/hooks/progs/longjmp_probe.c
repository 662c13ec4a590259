// A program whose SIGUSR1 handler siglongjmps out of whatever was running:
// the probe on jumped_out() raises SIGUSR1 in the middle of its run (the
// script's signal()), so every probe run is left by the longjmp.
//   longjmp_probe N        calls jumped_out() N times; prints the jumps
//   longjmp_probe N spin   calls it once, then spins (on the CPU, calling
//                          nothing probed) until the first bytes of
//                          jumped_out() are the program's own again (the
//                          probe was removed) and the agent's thread has
//                          ended (the detach finished), 60 s at most; then
//                          calls it N times more and says what it saw.
// With UBT_WAIT_STDIN set it first waits for a line on stdin (attach_run.sh).
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile long jumps;

__attribute__((noinline)) long jumped_out(long i) {
  __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
  return i * 3 + 1;
}

static void on_usr1(int sig) {
  (void)sig;
  jumps++;
  siglongjmp(env, 1);
}

// This process's threads, from /proc/self/status.
static int threads(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &n) == 1)
      break;
  if (f)
    fclose(f);
  return n;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  int spin = argc > 2 && strcmp(argv[2], "spin") == 0;
  unsigned char original[16];
  memcpy(original, (const void *)jumped_out, sizeof original);
  if (getenv("UBT_WAIT_STDIN")) {
    char line[16];
    if (!fgets(line, sizeof line, stdin))
      return 3;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  volatile long calls = 0;
  volatile long sum = 0;
  sigsetjmp(env, 1);
  while (calls < (spin ? 1 : n)) {
    calls++;
    sum += jumped_out(calls);
  }
  if (!spin) {
    printf("calls %ld jumps %ld\n", (long)calls, (long)jumps);
    return 0;
  }
  // On the CPU all along: a thread that waits for this one can see it run.
  double start = now();
  volatile unsigned long work = 0;
  int restored = 0, alone = 0;
  while (!(restored && alone) && now() - start < 60) {
    for (int i = 0; i < 100000; i++)
      work += i;
    restored = memcmp(original, (const void *)jumped_out, sizeof original) == 0;
    alone = restored && threads() == 1;
  }
  for (long i = 0; i < n; i++)
    sum += jumped_out(i);
  printf("jumps %ld, code %s, %s\n", (long)jumps,
         restored ? "restored" : "NOT restored",
         alone ? "the agent's thread is gone" : "the agent's thread is still there");
  return restored && alone ? 0 : 1;
}
