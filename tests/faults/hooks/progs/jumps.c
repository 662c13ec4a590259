// Control flow that leaves frames without returning, or returns more than
// once, through functions that return probes hook. argv[1] picks a phase:
//   setjmp     _setjmp in a loop; each buffer longjmp'd to three times,
//              over return-probed frames (probed, jumper)
//   sigsetjmp  sigsetjmp/siglongjmp, also out of a signal handler
//   context    getcontext/setcontext: returns twice
//   coroutines two makecontext coroutines that swapcontext to each other
//              from inside return-probed frames
//   vfork      vfork children that call probed() before _exit
// probed(x) returns x + 1 and is called exactly `calls` times in a way
// that returns; jumper() never returns (it longjmps). Prints the number
// of probed() calls that returned and a checksum.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static long returned, checksum;

__attribute__((noinline)) long probed(long x) {
  __asm__ volatile("" ::: "memory");
  return x + 1;
}

static long call_probed(long x) {
  long r = probed(x);
  returned++;
  checksum += r;
  return r;
}

__attribute__((noinline)) void jumper(jmp_buf *env, int v) {
  call_probed(v);
  longjmp(*env, v);
}

__attribute__((noinline)) void deeper(jmp_buf *env, int v) {
  call_probed(v);
  jumper(env, v);
}

static void phase_setjmp(void) {
  for (int i = 0; i < 50; i++) {
    jmp_buf env;
    volatile int times = 0;
    int r = _setjmp(env);
    times = times + 1;
    if (r < 3) {
      if (i % 2)
        deeper(&env, r + 1);
      else
        jumper(&env, r + 1);
    }
    if (times != 4)
      printf("setjmp %d: %d returns\n", i, (int)times);
    call_probed(i);
  }
}

static sigjmp_buf sig_env;
static void on_usr1(int sig) {
  (void)sig;
  call_probed(100);
  siglongjmp(sig_env, 1);
}

static void phase_sigsetjmp(void) {
  signal(SIGUSR1, on_usr1);
  for (int i = 0; i < 50; i++) {
    volatile int times = 0;
    int r = sigsetjmp(sig_env, 1);
    times = times + 1;
    if (r == 0) {
      call_probed(i);
      raise(SIGUSR1);
    }
    if (times != 2)
      printf("sigsetjmp %d: %d returns\n", i, (int)times);
  }
}

static void phase_context(void) {
  for (int i = 0; i < 50; i++) {
    ucontext_t uc;
    volatile int times = 0;
    getcontext(&uc);
    times = times + 1;
    call_probed(i);
    if (times < 3)
      setcontext(&uc);
    if (times != 3)
      printf("getcontext %d: %d returns\n", i, (int)times);
  }
}

static ucontext_t co_main, co[2];
static char co_stack[2][64 * 1024];

// Switches to the other coroutine from inside a return-probed frame.
__attribute__((noinline)) long yielding(int self, long x) {
  call_probed(x);
  swapcontext(&co[self], &co[1 - self]);
  return x + 1;
}

// Yields from `levels` return-probed frames down: the coroutines' frames
// interleave on the thread at different depths each time.
__attribute__((noinline)) long nested_yield(int self, long x, int levels) {
  if (levels == 0)
    return yielding(self, x);
  return nested_yield(self, x, levels - 1);
}

static void co_body(int self) {
  for (long i = 0; i < 50; i++)
    checksum += nested_yield(self, i, self == 0 ? (int)(i % 4) : (int)(3 - i % 4));
  swapcontext(&co[self], &co_main);
}

static void phase_coroutines(void) {
  for (int c = 0; c < 2; c++) {
    getcontext(&co[c]);
    co[c].uc_stack.ss_sp = co_stack[c];
    co[c].uc_stack.ss_size = sizeof co_stack[c];
    co[c].uc_link = &co_main;
    makecontext(&co[c], (void (*)(void))co_body, 1, c);
  }
  swapcontext(&co_main, &co[0]);
  // co[0] finished its loop first; let co[1] finish too.
  swapcontext(&co_main, &co[1]);
}

static void phase_vfork(void) {
  for (int i = 0; i < 20; i++) {
    pid_t p = vfork();
    if (p == 0) {
      probed(i);
      _exit(0);
    }
    int status;
    waitpid(p, &status, 0);
    call_probed(i);
  }
}

int main(int argc, char **argv) {
  const char *phase = argc > 1 ? argv[1] : "setjmp";
  if (!strcmp(phase, "setjmp"))
    phase_setjmp();
  else if (!strcmp(phase, "sigsetjmp"))
    phase_sigsetjmp();
  else if (!strcmp(phase, "context"))
    phase_context();
  else if (!strcmp(phase, "coroutines"))
    phase_coroutines();
  else if (!strcmp(phase, "vfork"))
    phase_vfork();
  printf("%s: returned %ld checksum %ld\n", phase, returned, checksum);
  return 0;
}
