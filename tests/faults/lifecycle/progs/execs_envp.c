// Calls the probed function, then execs PROG ARGS... with the environment
// main() was given (envp, not environ), as programs that pass their
// environment on explicitly do.
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int before_exec(int argc) {
  __asm__ volatile("" : : "r"(argc) : "memory");
  return argc;
}

int main(int argc, char **argv, char **envp) {
  if (argc < 2)
    return 2;
  before_exec(argc);
  fflush(stdout);
  execve(argv[1], argv + 1, envp);
  perror("execve");
  return 127;
}
