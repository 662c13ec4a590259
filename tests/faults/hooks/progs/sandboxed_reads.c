// A sandboxed program: after start it installs a seccomp filter of its own
// (argv[1]: "kill" or "errno") that forbids the system calls a tracer in
// the process might make at a probe hit (argv[2]: comma-separated names of
// process_vm_readv, prctl, kill, tgkill, getrandom, openat, getppid), optionally with its own
// SIGSEGV handler (argv[3]: "handler" at start, "late-handler" just before
// the filter, "blocked": no handler but every signal blocked from there
// on), then hands take() good, bad and page-crossing pointers, and finally
// checks its own handler still catches its own fault.
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) int take(const char *p, int n) {
  __asm__ volatile("" : : "r"(p), "r"(n) : "memory");
  return n;
}

__attribute__((noinline)) void named(void) { __asm__ volatile(""); }

static sigjmp_buf own_fault;
static volatile sig_atomic_t own_faults;

static void on_segv(int sig) {
  (void)sig;
  own_faults++;
  siglongjmp(own_fault, 1);
}

static int syscall_number(const char *name) {
  if (!strcmp(name, "process_vm_readv"))
    return SYS_process_vm_readv;
  if (!strcmp(name, "prctl"))
    return SYS_prctl;
  if (!strcmp(name, "kill"))
    return SYS_kill;
  if (!strcmp(name, "tgkill"))
    return SYS_tgkill;
  if (!strcmp(name, "getrandom"))
    return SYS_getrandom;
  if (!strcmp(name, "openat"))
    return SYS_openat;
  if (!strcmp(name, "getppid"))
    return SYS_getppid;
  fprintf(stderr, "unknown system call %s\n", name);
  exit(2);
}

static void sandbox(int kill_it, char *names) {
  struct sock_filter f[64];
  int n = 0;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, nr));
  int count = 0;
  int numbers[8];
  for (char *name = strtok(names, ","); name && count < 8; name = strtok(0, ","))
    numbers[count++] = syscall_number(name);
  for (int i = 0; i < count; i++) {
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, numbers[i],
                                          0, 1);
    f[n++] = (struct sock_filter)BPF_STMT(
        BPF_RET | BPF_K,
        kill_it ? SECCOMP_RET_KILL_PROCESS : (SECCOMP_RET_ERRNO | EPERM));
  }
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {(unsigned short)n, f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("seccomp");
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s kill|errno SYSCALLS [handler]\n", argv[0]);
    return 2;
  }
  const char *mode = argc > 3 ? argv[3] : "";
  int own_handler = !strcmp(mode, "handler") || !strcmp(mode, "late-handler");
  if (!strcmp(mode, "handler"))
    signal(SIGSEGV, on_segv);
  // Pages: [readable | unmapped], [readable | PROT_NONE], [readable | readable]
  char *a = mmap(0, 3 * 8192, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(a + 4096, 4096);
  mprotect(a + 12288, 4096, PROT_NONE);
  // Never mapped: the kernel places mappings top-down, far from the first
  // 64 KiB, and nothing here maps at a fixed address. A page unmapped here
  // was no good: a tracer attaching later (-p) may map its own memory in
  // the hole (ubtrace's agent once put a page there).
  char *gone = (char *)0x8000;
  // A string whose NUL is the last byte before an unmapped page, one that
  // runs into it without a NUL, one that crosses into a readable page.
  memcpy(a + 4096 - 6, "edge!", 6);
  memset(a + 12288 - 8, 'x', 8);
  memcpy(a + 20480 - 4, "across", 7);

  // UBT_WAIT_STDIN: wait for a line first (a tracer attaching with -p).
  if (getenv("UBT_WAIT_STDIN")) {
    char line[16];
    if (!fgets(line, sizeof line, stdin))
      return 2;
  }
  if (!strcmp(mode, "late-handler"))
    signal(SIGSEGV, on_segv);
  if (!strcmp(mode, "blocked")) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, 0);
  }
  sandbox(!strcmp(argv[1], "kill"), argv[2]);
  printf("sandboxed\n");
  fflush(stdout);

  take("hello", 1);
  take(NULL, 2);
  take(gone, 3);
  take(a + 12288, 4);                          // PROT_NONE
  take(a + 4096 - 6, 5);                       // ends at the unmapped page
  take(a + 12288 - 8, 6);                      // runs into PROT_NONE
  take(a + 20480 - 4, 7);                      // crosses a page boundary
  take((const char *)0xffff800000000000ull, 8); // kernel half
  take("bye", 9);
  named();

  if (own_handler) {
    if (sigsetjmp(own_fault, 1) == 0)
      *(volatile int *)gone = 1;
    printf("own handler ran %d\n", (int)own_faults);
  }
  printf("survived\n");
  return 0;
}
