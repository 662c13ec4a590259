// sandbox_exec kill|eperm PROG ARGS...: installs a seccomp filter under
// which socket() kills the process (kill) or fails with EPERM (eperm),
// then execs PROG. A sandbox made by the traced tree: the program it
// becomes must not die of the agent's connecting back (--follow, and -c
// following the command's own exec).
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "kill") && strcmp(argv[1], "eperm"))) {
    fprintf(stderr, "usage: sandbox_exec kill|eperm PROG ARGS...\n");
    return 2;
  }
  unsigned action = strcmp(argv[1], "kill") == 0
                        ? SECCOMP_RET_KILL_PROCESS
                        : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof code / sizeof code[0], code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("seccomp");
    return 1;
  }
  execv(argv[2], argv + 2);
  perror("execv");
  return 127;
}
