// System calls made every way a program can, for tracepoint:syscalls
// probes. Each mode opens /nonexistent/MODE a given number of times (each
// fails with ENOENT: its name and result are what the probes see), then
// prints "done".
//   libc N      openat() through libc's wrapper
//   inline N    an inline `syscall` instruction in this program
//   helper N    a static helper that calls syscall(2)
//   threads N   N pthreads and N raw clone() threads, one openat each
//   fork        a forked child, and a vfork'ed child that execs /bin/true
//   signals N   N signals to a handler that opens a file and changes the
//               mask on its way out (rt_sigreturn, rt_sigprocmask)
//   blocksys    a thread blocks SIGSYS with a raw rt_sigprocmask, then
//               makes system calls
//   seccomp     installs a filter that allows everything, then opens
//   loop N      N getppid() calls, timed: prints "calls N ns T ns/call"
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long inline_openat(const char *path) {
  long r;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "a"(SYS_openat), "D"(AT_FDCWD), "S"(path), "d"(O_RDONLY),
                     "r"(r10)
                   : "rcx", "r11", "memory");
  return r;
}

static __attribute__((noinline)) long helper_openat(const char *path) {
  return syscall(SYS_openat, AT_FDCWD, path, O_RDONLY, 0);
}

static void *pthread_body(void *arg) {
  (void)arg;
  openat(AT_FDCWD, "/nonexistent/pthread", O_RDONLY);
  return NULL;
}

static int clone_body(void *arg) {
  (void)arg;
  inline_openat("/nonexistent/clone");
  return 0;
}

static void on_usr1(int sig) {
  (void)sig;
  openat(AT_FDCWD, "/nonexistent/handler", O_RDONLY);
}

static void *blocker(void *arg) {
  (void)arg;
  unsigned long set = 1ul << (SIGSYS - 1);
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8);
  for (int i = 0; i < 3; i++)
    openat(AT_FDCWD, "/nonexistent/blocker", O_RDONLY);
  unsigned long now = 0;
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, 8);
  printf("blocker survived, SIGSYS %s\n",
         now & set ? "blocked" : "kept deliverable");
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "libc";
  int n = argc > 2 ? atoi(argv[2]) : 1;
  if (!strcmp(mode, "libc")) {
    for (int i = 0; i < n; i++)
      openat(AT_FDCWD, "/nonexistent/libc", O_RDONLY);
  } else if (!strcmp(mode, "inline")) {
    for (int i = 0; i < n; i++)
      inline_openat("/nonexistent/inline");
  } else if (!strcmp(mode, "helper")) {
    for (int i = 0; i < n; i++)
      helper_openat("/nonexistent/helper");
  } else if (!strcmp(mode, "threads")) {
    pthread_t t[64];
    for (int i = 0; i < n && i < 64; i++)
      pthread_create(&t[i], NULL, pthread_body, NULL);
    for (int i = 0; i < n && i < 64; i++)
      pthread_join(t[i], NULL);
    for (int i = 0; i < n; i++) {
      size_t size = 64 * 1024;
      char *stack = malloc(size);
      int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                  CLONE_THREAD | CLONE_SYSVSEM;
      clone(clone_body, stack + size, flags, NULL);
      usleep(20000); // the thread is done before its stack goes
    }
  } else if (!strcmp(mode, "fork")) {
    pid_t c = fork();
    if (c == 0) {
      openat(AT_FDCWD, "/nonexistent/forked", O_RDONLY);
      _exit(0);
    }
    waitpid(c, NULL, 0);
    c = vfork();
    if (c == 0) {
      execl("/bin/true", "true", (char *)NULL);
      _exit(1);
    }
    int status = 0;
    waitpid(c, &status, 0);
    printf("vfork child exited %d\n", WEXITSTATUS(status));
  } else if (!strcmp(mode, "signals")) {
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < n; i++)
      raise(SIGUSR1);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    sigprocmask(SIG_BLOCK, NULL, &old);
    printf("SIGUSR2 %s\n", sigismember(&old, SIGUSR2) ? "blocked" : "lost");
  } else if (!strcmp(mode, "blocksys")) {
    pthread_t t;
    pthread_create(&t, NULL, blocker, NULL);
    pthread_join(t, NULL);
  } else if (!strcmp(mode, "loop")) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++)
      getppid();
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
    printf("calls %d ns %ld ns/call\n", n, n ? ns / n : 0);
  } else if (!strcmp(mode, "seccomp")) {
    struct sock_filter allow[] = {
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {1, allow};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
    for (int i = 0; i < n; i++)
      openat(AT_FDCWD, "/nonexistent/sandboxed", O_RDONLY);
  }
  printf("done\n");
  return 0;
}
