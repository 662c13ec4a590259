/* Main sleeps inside glibc; SIGUSR1's handler announces itself and spins
 * in the program's own code forever. A thread in that state looks like it
 * runs its own code, yet it interrupted glibc, which may hold a lock: the
 * injector must not borrow it. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long g_spins;

static void on_usr1(int sig) {
  static const char message[] = "in handler\n";
  write(1, message, sizeof message - 1);
  for (;;)
    ++g_spins;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  printf("ready\n");
  fflush(stdout);
  for (;;)
    sleep(1000);
}
