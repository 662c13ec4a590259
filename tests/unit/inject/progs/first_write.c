/* For exec_hold_test: a constructor computes for 300 ms without a system
 * call (time to seize the program while its loader or the constructor
 * runs), then main's first system call is a write of "start"; after it,
 * main says whether the file argv[1] (which the test agent's entry
 * writes) was there by then ("agent yes" or "agent no"), then reads a
 * line from stdin and ends. With "mmap" as argv[2], main's first system
 * call is an mmap of a page instead: the call pthread_create makes for a
 * thread's stack, through the same instruction of libc. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO: no system call */
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((constructor)) static void busy_start(void) {
  double until = now() + 0.3;
  while (now() < until)
    ;
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[2], "mmap") == 0)
    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  write(1, "start\n", 6);
  const char *agent = argc > 1 && access(argv[1], F_OK) == 0 ? "agent yes\n"
                                                             : "agent no\n";
  write(1, agent, strlen(agent));
  char line[64];
  return read(0, line, sizeof line) < 0;
}
