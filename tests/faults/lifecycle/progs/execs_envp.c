// Calls the probed function, then execs PROG ARGS... with the environment
// main() was given (envp, not environ), as programs that pass their
// environment on explicitly do. `execs_envp --until FILE` waits for FILE
// instead (a program that stays, built statically too); `--execl PROG`
// and `--execlp NAME` exec with those (arguments: the name, "one", "two");
// `--fexecve PROG` and `--execveat PROG` with those (no arguments).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int before_exec(int argc) {
  __asm__ volatile("" : : "r"(argc) : "memory");
  return argc;
}

int main(int argc, char **argv, char **envp) {
  if (argc < 2)
    return 2;
  if (argc == 3 && !strcmp(argv[1], "--until")) {
    while (access(argv[2], F_OK) != 0)
      usleep(10000);
    return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "--execl")) {
    execl(argv[2], argv[2], "one", "two", (char *)NULL);
    return 127;
  }
  if (argc == 3 && !strcmp(argv[1], "--execlp")) {
    execlp(argv[2], argv[2], "one", "two", (char *)NULL);
    return 127;
  }
  if (argc == 3 && !strcmp(argv[1], "--fexecve")) {
    char *args[] = {argv[2], NULL};
    int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
    fexecve(fd, args, envp);
    return 127;
  }
  if (argc == 3 && !strcmp(argv[1], "--execveat")) {
    char *args[] = {argv[2], NULL};
    execveat(AT_FDCWD, argv[2], args, envp, 0);
    return 127;
  }
  before_exec(argc);
  fflush(stdout);
  execve(argv[1], argv + 1, envp);
  perror("execve");
  return 127;
}
