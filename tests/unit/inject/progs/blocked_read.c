/* Blocks in read(0). Prints what read returned, so a test can see that an
 * injection while it was blocked neither cut the read short nor lost its
 * data; then reads on until EOF, so it does not exit before the test says. With
 * "handler", SIGUSR1 gets a handler without SA_RESTART that records the sender:
 * a signal that arrives while it is blocked makes the read fail with EINTR, as
 * it would without injection.
 *
 * With "fgets" it blocks in read called by stdio (fgets on stdin); with
 * "system", in waitpid called by glibc's own system() (for 10 s). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t g_signals, g_sender, g_code;

static void on_usr1(int sig, siginfo_t *info, void *context) {
  ++g_signals;
  g_sender = info->si_pid;
  g_code = info->si_code;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "handler") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO; /* no SA_RESTART */
    sigaction(SIGUSR1, &sa, NULL);
  }
  printf("ready pid=%d\n", getpid());
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "system") == 0)
    return system("exec sleep 10") == -1;
  if (argc > 1 && strcmp(argv[1], "fgets") == 0) {
    char line[64];
    while (fgets(line, sizeof line, stdin))
      ;
    return 0;
  }
  char buffer[64] = {0};
  ssize_t n = read(0, buffer, sizeof buffer - 1);
  int err = n < 0 ? errno : 0;
  if (n > 0 && buffer[n - 1] == '\n')
    buffer[n - 1] = '\0';
  printf("read n=%zd errno=%s data=%s signals=%d sender=%d code=%d\n", n,
         err ? strerrorname_np(err) : "0", n > 0 ? buffer : "", (int)g_signals,
         (int)g_sender, (int)g_code);
  fflush(stdout);
  while (read(0, buffer, sizeof buffer) != 0)
    ;
  return 0;
}
