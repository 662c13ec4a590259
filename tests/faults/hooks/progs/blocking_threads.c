// Threads that block every signal (sigfillset + pthread_sigmask, as
// signalfd and sigwait servers do) and call functions that probes hook:
// jump_site (a jump patch), trap_site (too short for a jump: an int3 site),
// both in a loop, argv[1] threads x argv[2] calls each. The main thread
// creates them with every signal blocked too (so they start blocked), or,
// with argv[3] = "late", blocks nothing and they block every signal only
// once they are let go (after a tracer attached); they
// start calling once main lets them (after a line on stdin when
// UBT_WAIT_STDIN is set: a tracer attaching with -p), and main prints the
// sum the program computed itself.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long jump_site(long x) {
  __asm__ volatile("" ::: "memory");
  return x + 1;
}

// Three bytes: lea (%rdi), %rax... ret: shorter than a jump.
long trap_site(long x);
__asm__(".text\n.globl trap_site\n.type trap_site,@function\n.p2align 4\n"
        "trap_site:\n  mov %rdi, %rax\n  ret\n.size trap_site,.-trap_site\n");

static pthread_barrier_t start;
static long (*volatile jump_fn)(long) = jump_site;
static long (*volatile trap_fn)(long) = trap_site;

static int late;

static void *worker(void *arg) {
  long n = (long)arg, sum = 0;
  sigset_t all;
  sigfillset(&all);
  if (!late)
    pthread_sigmask(SIG_SETMASK, &all, NULL);
  pthread_barrier_wait(&start);
  if (late)
    pthread_sigmask(SIG_SETMASK, &all, NULL);
  for (long i = 0; i < n; i++)
    sum += jump_fn(i) - trap_fn(i);
  return (void *)sum;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  long each = argc > 2 ? atol(argv[2]) : 100000;
  late = argc > 3 && argv[3][0] == 'l';
  sigset_t all, old;
  sigfillset(&all);
  if (!late)
    pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t[64];
  if (threads > 64)
    threads = 64;
  pthread_barrier_init(&start, NULL, threads + 1);
  for (int i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, (void *)each);
  if (getenv("UBT_WAIT_STDIN")) {
    char line[16];
    if (!fgets(line, sizeof line, stdin))
      return 2;
  }
  pthread_barrier_wait(&start);
  long total = 0;
  for (int i = 0; i < threads; i++) {
    void *r;
    pthread_join(t[i], &r);
    total += (long)r;
  }
  printf("calls %ld sum %ld\n", threads * each, total);
  return 0;
}
