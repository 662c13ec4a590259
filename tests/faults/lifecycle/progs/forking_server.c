// A forking server, as nginx or a pre-fork daemon runs: the parent forks
// workers that call the probed functions (serve() calls handle()); the
// trace prints their addresses when they are gone, or are other programs.
//
//   forking_server N reaped         N workers serve once and exit; the
//                                   parent reaps them, serves, exits
//   forking_server N orphans FILE   the workers serve, then wait for FILE
//                                   (or for its directory to go);
//                                   the parent exits once all have served
//                                   (they outlive it, still this program)
//   forking_server N exec PIDFILE   the workers serve, then exec a sleeper
//                                   (the pid lives on as another program,
//                                   its pid written to PIDFILE); the parent
//                                   exits once all have exec'd
//   forking_server N churn          N short-lived children, fork and vfork
//                                   alternately: forked ones serve and
//                                   exit, vforked ones exec /bin/true; all
//                                   reaped, then the parent serves once
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int handle(int request) {
  __asm__ volatile("" : : "r"(request) : "memory");
  return request * 2;
}

__attribute__((noinline)) int serve(int request) {
  return handle(request) + 1;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int n = atoi(argv[1]);
  const char *mode = argv[2];
  const char *file = argc > 3 ? argv[3] : NULL;
  // Each worker holds the write end until it has served (and, for exec,
  // until its exec closes it): end of file says every worker got there.
  int done[2];
  if (pipe2(done, O_CLOEXEC) != 0)
    return 1;
  FILE *pids = !strcmp(mode, "exec") && file ? fopen(file, "w") : NULL;
  for (int i = 0; i < n; i++) {
    int vforked = !strcmp(mode, "churn") && i % 2;
    pid_t c = vforked ? vfork() : fork();
    if (c < 0)
      return 1;
    if (c == 0) {
      if (vforked) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
      }
      close(done[0]);
      serve(i);
      if (!strcmp(mode, "exec")) {
        execl("/bin/sleep", "sleep", "120", (char *)NULL);
        _exit(127);
      }
      close(done[1]);
      // Until FILE exists, or its directory is gone: a test that made the
      // file and removed its directory before this worker looked (a busy
      // machine) must not leave it waiting forever, holding the test's
      // output open.
      if (!strcmp(mode, "orphans") && file) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", file);
        char *slash = strrchr(dir, '/');
        if (slash)
          *slash = 0;
        else
          snprintf(dir, sizeof dir, ".");
        while (access(file, F_OK) != 0 && access(dir, F_OK) == 0)
          usleep(1000);
      }
      _exit(0);
    }
    if (pids)
      fprintf(pids, "%d\n", (int)c);
  }
  if (pids)
    fclose(pids);
  close(done[1]);
  char byte;
  while (read(done[0], &byte, 1) > 0)
    ;
  if (!strcmp(mode, "orphans") || !strcmp(mode, "exec"))
    return 0; // the workers outlive us
  for (int i = 0; i < n; i++)
    wait(NULL);
  serve(-1);
  printf("served %d\n", n);
  return 0;
}
