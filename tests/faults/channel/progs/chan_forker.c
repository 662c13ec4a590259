/* A traced program that forks: the child must not hold the agent's
 * descriptors (it would write into its parent's channel and keep the CLI's
 * end open after the parent is gone). Prints "child sockets N" (sockets in
 * the child's descriptor table besides none of its own) and "parent done". */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long g_sum;
__attribute__((noinline)) void chan_work(unsigned long i) {
  g_sum += i;
}

static int sockets(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    struct stat st;
    int fd = atoi(e->d_name);
    if (e->d_name[0] != '.' && fd >= 3 && fd != dirfd(d) &&
        fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
      n++;
  }
  if (d)
    closedir(d);
  return n;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  chan_work(1);
  pid_t pid = fork();
  if (pid == 0) {
    chan_work(2);
    printf("child sockets %d\n", sockets());
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  printf("parent sockets %d\n", sockets());
  printf("parent done\n");
  return 0;
}
