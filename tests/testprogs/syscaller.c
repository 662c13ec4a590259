// System calls made every way a program can, for tracepoint:syscalls
// probes. Each mode opens /nonexistent/MODE a given number of times (each
// fails with ENOENT: its name and result are what the probes see), then
// prints "done" (and sleeps SYSCALLER_LINGER_MS milliseconds, if set, so
// that a system-wide trace can still read its memory).
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
//   strictseccomp N  installs a SIGUSR1 handler, then a filter that kills
//               the process on gettid and rt_sigaction (a sandbox that
//               allows only what the program itself needs), raises SIGUSR1
//               (its handler opens), then opens N times
//   rawseccompfork N  installs, with this program's inline `syscall`
//               (no libc wrapper), a filter that kills the process on
//               get_robust_list and process_vm_readv, then forks with the
//               same instruction (a child glibc's fork handlers never
//               see, with no robust mutex list of its own): the child calls
//               forked_work("forked") N times; prints how the child ended
//               ("child exit S" or "child killed by signal S")
//   loop N      N getppid() calls, timed: prints "calls N ns T ns/call"
//               and "second half T ns/call"
//   inlineloop N the same through the program's own inline syscall
//   dispatchloop N  the same as loop, with syscall user dispatch on and
//               nothing trapped
//   pairloop N  N getppid() and N getuid() calls through libc, in
//               alternating batches of 100, each batch timed: prints the
//               median batch of each ("pair getppid X getuid Y ns/call");
//               a probe on one only costs the difference, with the
//               machine's drift the same for both
//   threadcalls T N  T threads (up to 2000), all alive at once, make N
//               getpid() calls each through the same inline `syscall` as
//               rewrite (first argument 4242); prints "calls C" and "wrong
//               results W", as rewrite does
//   pidreuse P  stops process P (the CLI tracing system-wide) with
//               SIGSTOP; a child named "pidreuse" opens
//               /nonexistent/pidreuse-first, a path on a page at a fixed
//               address, and exits; children are then forked (root sets
//               ns_last_pid) until one gets its pid, and that one puts
//               /nonexistent/pidreuse-second on the same page and waits;
//               P is continued, the child killed a second later. Prints
//               "reused" or "not reused", then "second alive" or "second
//               killed by signal S" (as it was before the kill)
//   execreuse P  the same, but the child, named "execreuse", execs this
//               program (mode holdpath) after its call, which puts the
//               second path on the page: the same process, a new image.
//               Prints "execed", then how the child was, as pidreuse
//   reusestacks  a child named "pidreuse" opens /nonexistent/pidreuse-first
//               and lingers 300 ms; once it has exited, children are
//               forked (root sets ns_last_pid) until one gets its pid,
//               which execs this program as `helper 1` lingering 500 ms:
//               another image of this program, loaded elsewhere, under
//               the number. Prints "reused" or "not reused"
//   rewrite T N T threads (up to 2000) make getpid() calls through one
//               inline `syscall` (the site) until a tracer rewrites it (or
//               10 s pass), then N more each; prints "site
//               rewritten|untouched", "calls C" and whether every result was
//               the pid
//   rewriteblocked T N  the same, each thread blocking every signal
//               first with a raw rt_sigprocmask; also prints how many
//               threads still had SIGTRAP blocked at the end
//   longjmp N   N getppid() calls while a 200 us timer's SIGALRM handler
//               siglongjmps back to the loop (often out of the middle of a
//               call or a probe): prints "calls C jumps J"
//   handlerquery installs SIGUSR1 (SA_SIGINFO) and SIGUSR2 (signal())
//               handlers, reads them back with sigaction(), raises both:
//               prints whether the handler and flags read back are its own
//               and whether each ran as installed
//   forkrewrite N  forks children in a loop while the site is rewritten
//               (and N more after): each child makes 200 getpid() calls at
//               the site, checks each result is its own pid and exits;
//               prints "site rewritten|untouched", "children C" and "bad B"
//               (children whose results were wrong or that died)
//   blocked     a thread blocks in read() at the site while the main
//               thread's getpid() calls there get it rewritten; then a
//               write wakes it: prints what it read
//   libcwrap N  getppid() through libc until a tracer rewrites its code
//               (or 10 s pass), then N more: prints "libc getppid
//               rewritten|untouched" and "calls C"
//   vectors N   N calls at the site with xmm0-15 (and ymm0-15 with AVX)
//               holding patterns, and as many with x87 values, MXCSR,
//               zmm16-31 and k1-7 (AVX-512), and clean upper halves: prints
//               whether each survived
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// One `syscall` instruction that the modes rewrite, blocked and vectors
// share, with a label on it.
__attribute__((noinline)) static long site_call(long nr, long a, long b,
                                                long c) {
  long r;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile(".globl syscaller_site\n"
                   "syscaller_site:\n\t"
                   "syscall"
                   : "=a"(r)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return r;
}
extern const volatile unsigned char syscaller_site[];

// Installs a filter that kills the process on system calls a and b and
// allows the rest, through libc's syscall() or (inline) the site.
static long kill_on(long a, long b, int inline_call) {
  struct sock_filter strict[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, b, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof strict / sizeof strict[0], strict};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  return inline_call
             ? site_call(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&prog)
             : syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int site_rewritten(void) {
  return syscaller_site[0] != 0x0f || syscaller_site[1] != 0x05;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile int info_signo, plain_signo;

static void on_info(int sig, siginfo_t *info, void *uc) {
  (void)uc;
  info_signo = info && info->si_signo == sig ? sig : -1;
}

// A probe's target in rawseccompfork's child.
__attribute__((noinline)) int forked_work(const char *what) {
  __asm__ volatile("" ::"r"(what) : "memory");
  return what[0];
}

static void on_plain(int sig) {
  plain_signo = sig;
}

static sigjmp_buf jump_back;
static volatile long jumps;

static void jump_out(int sig) {
  (void)sig;
  jumps++;
  siglongjmp(jump_back, 1);
}

struct rewrite_state {
  int n;
  long calls;
  long wrong;
  int block_all; // block every signal first, with a raw rt_sigprocmask
  int trap_blocked; // SIGTRAP was still blocked at the end
  int no_wait;      // threadcalls: N calls at once, no waiting for a rewrite
};

static pthread_barrier_t threadcalls_start;

static void *rewrite_body(void *arg) {
  struct rewrite_state *st = arg;
  if (st->no_wait)
    pthread_barrier_wait(&threadcalls_start);
  if (st->block_all) {
    unsigned long all = ~0ul;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
  }
  long pid = getpid();
  double until = seconds() + 10;
  while (!st->no_wait && !site_rewritten() && seconds() < until) {
    st->calls++;
    st->wrong += site_call(SYS_getpid, 4242, 0, 0) != pid;
  }
  for (int i = 0; i < st->n; i++) {
    st->calls++;
    st->wrong += site_call(SYS_getpid, 4242, 0, 0) != pid;
  }
  unsigned long now = 0;
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, 8);
  st->trap_blocked = (now >> (SIGTRAP - 1)) & 1;
  return NULL;
}

static int pipe_fds[2];
static char read_buf[16];
static long read_result;

static void *reader(void *arg) {
  (void)arg;
  read_result = site_call(SYS_read, pipe_fds[0], (long)read_buf, 5);
  return NULL;
}

// xmm0-15 (ymm0-15 with AVX) hold patterns across a call at the site.
static int vectors_survive(void) {
  unsigned char in[16][32], out[16][32];
  for (int r = 0; r < 16; r++)
    for (int b = 0; b < 32; b++)
      in[r][b] = (unsigned char)(r * 37 + b * 11 + 1);
  int avx = __builtin_cpu_supports("avx");
  long pid = getpid(), got;
#define LOAD(op, n) op " " #n "*32(%[in]), %%" REGS(n) "\n\t"
#define STORE(op, n) op " %%" REGS(n) ", " #n "*32(%[out])\n\t"
#define ALL(M, op)                                                             \
  M(op, 0)                                                                     \
  M(op, 1)                                                                     \
  M(op, 2)                                                                     \
  M(op, 3)                                                                     \
  M(op, 4) M(op, 5) M(op, 6) M(op, 7) M(op, 8) M(op, 9) M(op, 10) M(op, 11)    \
      M(op, 12) M(op, 13) M(op, 14) M(op, 15)
  register long r10 __asm__("r10") = 0;
#define KEEP_ACROSS_CALL(op)                                                   \
  __asm__ volatile(                                                            \
      ALL(LOAD, op) "mov %[nr], %%eax\n\t"                                     \
                    "call site_call_asm\n\t" ALL(STORE, op)                    \
      : "=a"(got)                                                              \
      : [in] "r"(in), [out] "r"(out), [nr] "i"(SYS_getpid), "r"(r10)           \
      : "rcx", "r11", "rdi", "rsi", "rdx", "memory", "xmm0", "xmm1", "xmm2",   \
        "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",       \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15")
  if (avx) {
#define REGS(n) "ymm" #n
    KEEP_ACROSS_CALL("vmovdqu");
#undef REGS
  } else {
#define REGS(n) "xmm" #n
    KEEP_ACROSS_CALL("movdqu");
#undef REGS
  }
  if (got != pid)
    return 0;
  int width = avx ? 32 : 16;
  for (int r = 0; r < 16; r++)
    if (memcmp(in[r], out[r], width))
      return 0;
  return 1;
}

// The rest of what a probe could change, across a call at the site: two
// x87 values and the x87 control word, and MXCSR (both set to round toward
// zero). The probe path keeps the vector registers by moves, not XSAVE
// (runtime/hook/vector_moves.h), and claims it never touches x87 state.
static int x87_and_mxcsr_survive(void) {
  long double a = 1.25L, b = -3.5L, a_out = 0, b_out = 0;
  unsigned short cw_in = 0x0f7f, cw_out = 0, cw_was;
  unsigned int mx_in = 0x7f80, mx_out = 0, mx_was;
  long pid = getpid(), got;
  __asm__ volatile("fnstcw %0\n\tstmxcsr %1" : "=m"(cw_was), "=m"(mx_was));
  __asm__ volatile("ldmxcsr %[mxi]\n\t"
                   "fldcw %[cwi]\n\t"
                   "fldt %[a]\n\t"
                   "fldt %[b]\n\t"
                   "mov %[nr], %%eax\n\t"
                   "call site_call_asm\n\t"
                   "fstpt %[bo]\n\t"
                   "fstpt %[ao]\n\t"
                   "fnstcw %[cwo]\n\t"
                   "stmxcsr %[mxo]\n\t"
                   "fldcw %[cww]\n\t"
                   "ldmxcsr %[mxw]"
                   : "=a"(got), [ao] "=m"(a_out), [bo] "=m"(b_out),
                     [cwo] "=m"(cw_out), [mxo] "=m"(mx_out)
                   : [a] "m"(a), [b] "m"(b), [cwi] "m"(cw_in), [mxi] "m"(mx_in),
                     [cww] "m"(cw_was), [mxw] "m"(mx_was), [nr] "i"(SYS_getpid)
                   : "rcx", "r11", "rdi", "rsi", "rdx", "memory");
  return got == pid && a_out == a && b_out == b && cw_out == cw_in &&
         mx_out == mx_in;
}

// The AVX-512 registers the 16-register tests cannot name: zmm16-31 and
// the opmask registers k1-7.
__attribute__((target("avx512f"))) static int avx512_survive(void) {
  static unsigned char in[16][64] __attribute__((aligned(64))),
      out[16][64] __attribute__((aligned(64)));
  unsigned short k_in[7], k_out[7];
  for (int r = 0; r < 16; r++)
    for (int b = 0; b < 64; b++)
      in[r][b] = (unsigned char)(r * 53 + b * 7 + 3);
  for (int i = 0; i < 7; i++)
    k_in[i] = (unsigned short)(0x1357 * (i + 1));
  long pid = getpid(), got;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile(
      ".irp i,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
      "vmovdqu64 (\\i-16)*64(%[in]), %%zmm\\i\n\t.endr\n\t"
      ".irp i,1,2,3,4,5,6,7\n\tkmovw (\\i-1)*2(%[kin]), %%k\\i\n\t.endr\n\t"
      "mov %[nr], %%eax\n\t"
      "call site_call_asm\n\t"
      ".irp i,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
      "vmovdqu64 %%zmm\\i, (\\i-16)*64(%[out])\n\t.endr\n\t"
      ".irp i,1,2,3,4,5,6,7\n\tkmovw %%k\\i, (\\i-1)*2(%[kout])\n\t.endr"
      : "=a"(got)
      : [in] "r"(in), [out] "r"(out), [kin] "r"(k_in), [kout] "r"(k_out),
        [nr] "i"(SYS_getpid), "r"(r10)
      : "rcx", "r11", "rdi", "rsi", "rdx", "memory", "xmm16", "xmm17",
        "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25",
        "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3",
        "k4", "k5", "k6", "k7");
  return got == pid && !memcmp(in, out, sizeof in) &&
         !memcmp(k_in, k_out, sizeof k_in);
}

// Whether clean upper halves of the vector registers (VZEROUPPER, then
// SSE values in xmm0-15) are still clean after a probed call, as XINUSE
// says: a program without AVX code must not be left with dirty upper
// state. -1: the CPU does not report it (or never reports it clean).
static int clean_upper_stays_clean(void) {
  unsigned a, b, c, d;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(13), "c"(1));
  if (!(a & 4) || !__builtin_cpu_supports("avx"))
    return -1;
  unsigned char in[16][16], out[16][16];
  for (int r = 0; r < 16; r++)
    for (int i = 0; i < 16; i++)
      in[r][i] = (unsigned char)(r * 29 + i * 5 + 7);
  unsigned before, after;
  long pid = getpid(), got;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile(
      "vzeroupper\n\t"
      ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
      "movdqu \\i*16(%[in]), %%xmm\\i\n\t.endr\n\t"
      "mov $1, %%ecx\n\txgetbv\n\tmov %%eax, %[before]\n\t"
      "mov %[nr], %%eax\n\t"
      "call site_call_asm\n\t"
      "mov %%rax, %%r8\n\t"
      "mov $1, %%ecx\n\txgetbv\n\tmov %%eax, %[after]\n\t"
      "mov %%r8, %%rax\n\t"
      ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
      "movdqu %%xmm\\i, \\i*16(%[out])\n\t.endr"
      : "=a"(got), [before] "=m"(before), [after] "=m"(after)
      : [in] "r"(in), [out] "r"(out), [nr] "i"(SYS_getpid), "r"(r10)
      : "rcx", "r11", "rdx", "rdi", "rsi", "r8", "memory", "xmm0", "xmm1",
        "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  if (got != pid || memcmp(in, out, sizeof in))
    return 0;
  if (before & 4)
    return -1;
  return !(after & 4);
}

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

// The site again, callable from asm with rax = nr and nothing else used:
// the vector test's registers are all live around it.
__asm__(".text\n"
        ".globl site_call_asm\n"
        ".type site_call_asm, @function\n"
        "site_call_asm:\n\t"
        ".cfi_startproc\n\t"
        "nopl 0(%rax,%rax,1)\n" // 5 bytes: room for a jump before it
        ".globl syscaller_site_asm\n"
        "syscaller_site_asm:\n\t"
        "syscall\n\t"
        "ret\n\t"
        ".cfi_endproc\n"
        ".size site_call_asm, .-site_call_asm\n");
extern const volatile unsigned char syscaller_site_asm[];

static long ns_between(struct timespec a, struct timespec b) {
  return (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
}

static int compare_longs(const void *x, const void *y) {
  long a = *(const long *)x, b = *(const long *)y;
  return (a > b) - (a < b);
}

// A page at an address every process of this program can map, with
// `path` on it.
#define FIXED_PAGE ((char *)0x5a5a00000000)
static void put_path(const char *path) {
  char *page = mmap(FIXED_PAGE, 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (page != FIXED_PAGE)
    _exit(3);
  strcpy(page, path);
}

// The first process of pidreuse and execreuse: opens the first path from
// the page, then exits or execs this program (holdpath), which tells
// `ready`.
static pid_t open_first(int exec_after, int ready) {
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_NAME, exec_after ? "execreuse" : "pidreuse", 0, 0, 0);
    put_path("/nonexistent/pidreuse-first");
    syscall(SYS_openat, AT_FDCWD, FIXED_PAGE, O_RDONLY);
    if (exec_after) {
      char fd[16];
      snprintf(fd, sizeof fd, "%d", ready);
      execl("/proc/self/exe", "syscaller", "holdpath", fd, (char *)NULL);
    }
    _exit(0);
  }
  return child;
}

// holdpath FD: the second path on the page; tells FD, then waits.
static void hold_second(int ready) {
  put_path("/nonexistent/pidreuse-second");
  if (write(ready, "x", 1) != 1)
    _exit(4);
  for (;;)
    pause();
}

// Asks that the next process made get pid `last` + 1 (root; another
// process may take it first).
static void next_pid_after(pid_t last) {
  int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
  if (fd >= 0) {
    dprintf(fd, "%d", last);
    close(fd);
  }
}

static void pid_reuse(pid_t cli, int exec_after) {
  // Not "syscaller": system-wide traces beside this one count its calls.
  prctl(PR_SET_NAME, "reusehelper", 0, 0, 0);
  kill(cli, SIGSTOP);
  int ready[2];
  if (pipe(ready) != 0)
    exit(2);
  pid_t first = open_first(exec_after, ready[1]), second = first;
  char c;
  if (exec_after) {
    close(ready[1]);
    if (read(ready[0], &c, 1) == 1)
      printf("execed\n");
  } else {
    waitpid(first, NULL, 0);
    close(ready[0]);
    close(ready[1]);
    second = -1;
    for (int tries = 0; tries < 200 && second != first; tries++) {
      if (second > 0) {
        kill(second, SIGKILL);
        waitpid(second, NULL, 0);
      }
      next_pid_after(first - 1);
      if (pipe(ready) != 0)
        exit(2);
      second = fork();
      if (second == 0)
        hold_second(ready[1]);
      close(ready[1]);
      if (read(ready[0], &c, 1) != 1)
        second = -1;
      close(ready[0]);
    }
    printf(second == first ? "reused\n" : "not reused\n");
  }
  fflush(stdout);
  kill(cli, SIGCONT);
  usleep(1000 * 1000);
  int status = 0;
  if (waitpid(second, &status, WNOHANG) == second) {
    printf("second killed by signal %d\n", WTERMSIG(status));
  } else {
    printf("second alive\n");
    kill(second, SIGKILL);
    waitpid(second, NULL, 0);
  }
}

static void reuse_stacks(void) {
  prctl(PR_SET_NAME, "reusehelper", 0, 0, 0);
  pid_t first = fork();
  if (first == 0) {
    prctl(PR_SET_NAME, "pidreuse", 0, 0, 0);
    syscall(SYS_openat, AT_FDCWD, "/nonexistent/pidreuse-first", O_RDONLY);
    usleep(300 * 1000);
    _exit(0);
  }
  waitpid(first, NULL, 0);
  int reused = 0;
  for (int tries = 0; tries < 200 && !reused; tries++) {
    next_pid_after(first - 1);
    pid_t child = fork();
    if (child == 0) {
      if (getpid() != first)
        _exit(0);
      setenv("SYSCALLER_LINGER_MS", "500", 1);
      execl("/proc/self/exe", "syscaller", "helper", "1", (char *)NULL);
      _exit(5);
    }
    reused = child == first;
    waitpid(child, NULL, 0);
  }
  printf(reused ? "reused\n" : "not reused\n");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "libc";
  int n = argc > 2 ? atoi(argv[2]) : 1;
  if (!strcmp(mode, "holdpath")) {
    hold_second(n);
  } else if (!strcmp(mode, "reusestacks")) {
    reuse_stacks();
    return 0;
  } else if (!strcmp(mode, "pidreuse") || !strcmp(mode, "execreuse")) {
    pid_reuse(n, !strcmp(mode, "execreuse"));
    return 0;
  } else if (!strcmp(mode, "libc")) {
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
  } else if (!strcmp(mode, "loop") || !strcmp(mode, "inlineloop") ||
             !strcmp(mode, "dispatchloop")) {
    // Timed whole, and its second half alone (a tracer's start-up costs
    // left out). dispatchloop: with syscall user dispatch on and nothing
    // trapped (its selector at ALLOW), what the kernel's part costs.
    int program_site = !strcmp(mode, "inlineloop");
    static char selector = 0; // SYSCALL_DISPATCH_FILTER_ALLOW
    if (!strcmp(mode, "dispatchloop") &&
        prctl(59 /* PR_SET_SYSCALL_USER_DISPATCH */, 1, 0, 0, &selector) != 0)
      return 1;
    struct timespec a, m, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
      if (i == n / 2)
        clock_gettime(CLOCK_MONOTONIC, &m);
      if (program_site)
        site_call(SYS_getppid, 0, 0, 0);
      else
        getppid();
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ns = ns_between(a, b), late = ns_between(m, b);
    printf("calls %d ns %ld ns/call\n", n, n ? ns / n : 0);
    printf("second half %ld ns/call\n", n - n / 2 ? late / (n - n / 2) : 0);
  } else if (!strcmp(mode, "pairloop")) {
    enum { kBatch = 100 };
    long nb = n / kBatch, *t[2];
    t[0] = calloc(nb + 1, sizeof(long));
    t[1] = calloc(nb + 1, sizeof(long));
    if (!t[0] || !t[1])
      return 1;
    for (long i = 0; i < nb; i++)
      for (int which = 0; which < 2; which++) {
        struct timespec x, y;
        clock_gettime(CLOCK_MONOTONIC, &x);
        for (int k = 0; k < kBatch; k++)
          which ? (void)getuid() : (void)getppid();
        clock_gettime(CLOCK_MONOTONIC, &y);
        t[which][i] = ns_between(x, y);
      }
    // The first half left out: a tracer rewrites the sites meanwhile.
    long half = nb / 2;
    qsort(t[0] + half, nb - half, sizeof(long), compare_longs);
    qsort(t[1] + half, nb - half, sizeof(long), compare_longs);
    long mid = half + (nb - half) / 2;
    printf("pair getppid %ld getuid %ld ns/call\n", nb ? t[0][mid] / kBatch : 0,
           nb ? t[1][mid] / kBatch : 0);
    free(t[0]);
    free(t[1]);
  } else if (!strcmp(mode, "rewrite") || !strcmp(mode, "rewriteblocked") ||
             !strcmp(mode, "threadcalls")) {
    int block_all = !strcmp(mode, "rewriteblocked");
    int no_wait = !strcmp(mode, "threadcalls");
    int threads = n < 1 ? 1 : n > 2000 ? 2000 : n;
    int each = argc > 3 ? atoi(argv[3]) : 1000;
    pthread_t *t = calloc(threads, sizeof *t);
    struct rewrite_state *st = calloc(threads, sizeof *st);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    if (no_wait)
      pthread_barrier_init(&threadcalls_start, NULL, threads);
    for (int i = 0; i < threads; i++) {
      st[i] = (struct rewrite_state){each, 0, 0, block_all, 0, no_wait};
      if (pthread_create(&t[i], &attr, rewrite_body, &st[i]) != 0) {
        printf("cannot start thread %d\n", i);
        return 1;
      }
    }
    long calls = 0, wrong = 0, trap_blocked = 0;
    for (int i = 0; i < threads; i++) {
      pthread_join(t[i], NULL);
      calls += st[i].calls;
      wrong += st[i].wrong;
      trap_blocked += st[i].trap_blocked;
    }
    if (block_all)
      printf("threads with SIGTRAP blocked %ld\n", trap_blocked);
    if (!no_wait)
      printf("site %s\n", site_rewritten() ? "rewritten" : "untouched");
    printf("calls %ld\n", calls);
    printf("wrong results %ld\n", wrong);
  } else if (!strcmp(mode, "handlerquery")) {
    struct sigaction act = {0}, back = {0};
    act.sa_sigaction = on_info;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, SIGUSR2);
    sigaction(SIGUSR1, &act, NULL);
    signal(SIGUSR2, on_plain);
    sigaction(SIGUSR1, NULL, &back);
    printf("handler kept: %s\n",
           back.sa_sigaction == on_info ? "yes" : "no");
    printf("flags kept: %s\n",
           (back.sa_flags & (SA_SIGINFO | SA_RESTART)) ==
                       (SA_SIGINFO | SA_RESTART) &&
                   sigismember(&back.sa_mask, SIGUSR2)
               ? "yes"
               : "no");
    struct sigaction plain = {0};
    sigaction(SIGUSR2, NULL, &plain);
    printf("plain handler kept: %s\n",
           plain.sa_handler == on_plain ? "yes" : "no");
    raise(SIGUSR1);
    raise(SIGUSR2);
    printf("info handler ran: %s\n", info_signo == SIGUSR1 ? "yes" : "no");
    printf("plain handler ran: %s\n", plain_signo == SIGUSR2 ? "yes" : "no");
  } else if (!strcmp(mode, "longjmp")) {
    signal(SIGALRM, jump_out);
    struct itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &every, NULL);
    static volatile long calls;
    sigsetjmp(jump_back, 1);
    while (calls < n) {
      calls++;
      getppid();
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("calls %ld jumps %ld\n", calls, jumps);
  } else if (!strcmp(mode, "forkrewrite")) {
    long children = 0, bad = 0, after = 0;
    double until = seconds() + 10;
    while (after < n && (site_rewritten() || seconds() < until)) {
      if (site_rewritten())
        after++;
      pid_t c = fork();
      if (c < 0)
        return 1;
      if (c == 0) {
        long me = getpid(), wrong = 0;
        for (int i = 0; i < 200; i++)
          wrong += site_call(SYS_getpid, 4242, 0, 0) != me;
        _exit(wrong != 0);
      }
      // The parent's calls keep the site noted while children come and go.
      site_call(SYS_getpid, 4242, 0, 0);
      int status;
      while (waitpid(c, &status, 0) < 0)
        ;
      children++;
      bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    printf("site %s\n", site_rewritten() ? "rewritten" : "untouched");
    printf("children %ld\n", children);
    printf("bad %ld\n", bad);
  } else if (!strcmp(mode, "blocked")) {
    if (pipe(pipe_fds) != 0)
      return 1;
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    usleep(100000); // the reader is in the kernel, at the site
    long pid = getpid(), wrong = 0;
    double until = seconds() + 10;
    while (!site_rewritten() && seconds() < until)
      wrong += site_call(SYS_getpid, 4242, 0, 0) != pid;
    printf("site %s\n", site_rewritten() ? "rewritten" : "untouched");
    if (write(pipe_fds[1], "hello", 5) != 5)
      return 1;
    pthread_join(t, NULL);
    printf("reader got %ld: %.5s\n", read_result, read_buf);
    printf("wrong results %ld\n", wrong);
  } else if (!strcmp(mode, "libcwrap")) {
    // Its first bytes as loaded, then whether they change.
    volatile const unsigned char *code = (const unsigned char *)&getppid;
    unsigned char before[8];
    for (int i = 0; i < 8; i++)
      before[i] = code[i];
    long calls = 0;
    double until = seconds() + 10;
    int changed = 0;
    while (!changed && seconds() < until) {
      getppid();
      calls++;
      for (int i = 0; i < 8; i++)
        changed |= code[i] != before[i];
    }
    for (int i = 0; i < n; i++, calls++)
      getppid();
    printf("libc getppid %s\n", changed ? "rewritten" : "untouched");
    printf("calls %ld\n", calls);
  } else if (!strcmp(mode, "vectors")) {
    int kept = 1;
    double until = seconds() + 10;
    while ((syscaller_site_asm[0] == 0x0f && syscaller_site_asm[1] == 0x05) &&
           seconds() < until)
      kept &= vectors_survive();
    printf("site %s\n",
           syscaller_site_asm[0] == 0x0f && syscaller_site_asm[1] == 0x05
               ? "untouched"
               : "rewritten");
    int x87 = 1, avx512 = __builtin_cpu_supports("avx512f") ? 1 : -1;
    int clean = clean_upper_stays_clean();
    for (int i = 0; i < n; i++) {
      kept &= vectors_survive();
      x87 &= x87_and_mxcsr_survive();
      if (avx512 >= 0)
        avx512 &= avx512_survive();
      if (clean >= 0)
        clean &= clean_upper_stays_clean();
    }
    printf("vector registers %s\n", kept ? "kept" : "CHANGED");
    printf("x87 and mxcsr %s\n", x87 ? "kept" : "CHANGED");
    printf("avx512 registers %s\n", avx512 < 0   ? "not on this CPU"
                                     : avx512 ? "kept"
                                              : "CHANGED");
    printf("clean upper state %s\n", clean < 0   ? "not reported by this CPU"
                                      : clean ? "kept clean"
                                              : "DIRTIED");
  } else if (!strcmp(mode, "strictseccomp")) {
    signal(SIGUSR1, on_usr1);
    if (kill_on(SYS_gettid, SYS_rt_sigaction, 0) != 0)
      perror("seccomp");
    kill(getpid(), SIGUSR1);
    printf("raised\n");
    for (int i = 0; i < n; i++)
      openat(AT_FDCWD, "/nonexistent/sandboxed", O_RDONLY);
  } else if (!strcmp(mode, "rawseccompfork")) {
    if (kill_on(SYS_get_robust_list, SYS_process_vm_readv, 1) != 0)
      printf("seccomp failed\n");
    fflush(stdout);
    pid_t child = (pid_t)site_call(SYS_fork, 0, 0, 0);
    if (child == 0) {
      for (int i = 0; i < n; i++)
        forked_work("forked");
      site_call(SYS_exit_group, 0, 0, 0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status))
      printf("child killed by signal %d\n", WTERMSIG(status));
    else
      printf("child exit %d\n", WEXITSTATUS(status));
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
  fflush(stdout);
  if (getenv("SYSCALLER_LINGER_MS"))
    usleep(1000 * atoi(getenv("SYSCALLER_LINGER_MS")));
  return 0;
}
