// USDT probes for the notes and argument tests. At start it prints what
// each probe's arguments will be ("expect PROVIDER:NAME V1 V2 ...") and
// where the semaphore is; each "fire" line on stdin fires every probe once
// and answers "fired enabled=N" (N: the semaphore's value). EOF ends it.
#include <stdio.h>
#include <string.h>
#include <sys/sdt.h>

#define PROBED __attribute__((noinline, used))

volatile int seed_int = 1234;
volatile long seed_long = -9876543210L;
int global_counter = 42;
static volatile long static_counter = -7;

void ubt_fire_sema(int v);
int ubt_sema_value(void);
void *ubt_sema_address(void);

PROBED static void fire_twice_a(int v) {
  DTRACE_PROBE1(ubt, twice, v);
}
PROBED static void fire_twice_b(long v) {
  DTRACE_PROBE1(ubt, twice, v);
}

PROBED static void fire(void) {
  int a = seed_int;
  long b = seed_long;
  DTRACE_PROBE2(ubt, args2, a, b);
  DTRACE_PROBE3(ubt, consts, 5, -7, 300);
  DTRACE_PROBE2(ubt, globals, global_counter, static_counter);
  short s = (short)(seed_int - 1237);
  unsigned char c = (unsigned char)(seed_int - 1034);
  DTRACE_PROBE2(ubt, small, s, c);
  fire_twice_a(seed_int + 1);
  fire_twice_b(seed_int + 2);
  ubt_fire_sema(seed_int + 3);
}

int main(void) {
  printf("expect ubt:args2 %d %ld\n", seed_int, seed_long);
  printf("expect ubt:consts 5 -7 300\n");
  printf("expect ubt:globals %d %ld\n", global_counter, static_counter);
  printf("expect ubt:small %d %d\n", (short)(seed_int - 1237),
         (unsigned char)(seed_int - 1034));
  printf("expect ubt:twice %d\n", seed_int + 1);
  printf("expect ubt:twice %d\n", seed_int + 2);
  printf("expect ubt:sema %d\n", seed_int + 3);
  printf("semaphore %p\n", ubt_sema_address());
  printf("ready\n");
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof(line), stdin)) {
    if (strncmp(line, "fire", 4) == 0)
      fire();
    printf("fired enabled=%d\n", ubt_sema_value());
    fflush(stdout);
  }
  return 0;
}
