/* Sleeps with nanosleep (1.5 s), then with sleep (1 s), announcing each on
 * stdout; prints how each ended and whether the full time passed, so a
 * test can check that an injection during a sleep neither shortened nor
 * failed it. */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("nanosleep\n");
  struct timespec request = {1, 500000000}, remaining = {0, 0};
  double start = now();
  int rc = nanosleep(&request, &remaining);
  int err = rc ? errno : 0;
  double slept = now() - start;
  printf("nanosleep rc=%d errno=%d full=%d\n", rc, err, slept >= 1.5);
  printf("sleep\n");
  start = now();
  unsigned left = sleep(1);
  slept = now() - start;
  printf("sleep left=%u full=%d\n", left, slept >= 1.0);
  return 0;
}
