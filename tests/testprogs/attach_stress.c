// The target of the attach/detach stress test (tests/unit/session): argv[1]
// threads call four probed functions in a tight loop and check every
// result, until stdin reaches end of file. Then it joins them, compares the
// functions' first bytes with the copy it took before any tracer came
// (detach must have put them back), prints what it saw and exits 0 only
// when every result, total and byte was right.
//
// The functions have the prologue shapes a hook must handle:
//   stress_mix   C at -O0: a frame-pointer prologue (push rbp; mov rbp,
//                rsp), six arguments that a probe must leave intact
//   stress_rip   a rip-relative load first (relocated into the trampoline)
//   stress_jcc   a short conditional branch inside the first 5 bytes
//   stress_tiny  4 bytes in all: too short for a jump (the trap path)
//
// Protocol on stdout: "ready <threads> <mix> <rip> <jcc> <tiny>" (addresses
// in hex) once every thread runs, and at the end one line per check.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64
#define SAVED_BYTES 16

// Read by stress_rip through a rip-relative load.
volatile uint64_t stress_bias = 0x5eed0000ull;

__attribute__((noinline)) uint64_t stress_mix(uint64_t a, uint64_t b,
                                              uint64_t c, uint64_t d,
                                              uint64_t e, uint64_t f) {
  return (a ^ (b << 7)) * 0x9e3779b97f4a7c15ull + (c >> 3) - d * 5 + (e ^ f);
}
// The same formula, not called: what stress_mix must return.
#define MIX(a, b, c, d, e, f)                                                  \
  (((a) ^ ((b) << 7)) * 0x9e3779b97f4a7c15ull + ((c) >> 3) - (d)*5 +           \
   ((e) ^ (f)))

uint64_t stress_rip(uint64_t x);
uint64_t stress_jcc(uint64_t x);
uint32_t stress_tiny(uint32_t x);
__asm__(".intel_syntax noprefix\n"
        ".text\n"
        // x + stress_bias
        ".p2align 4, 0xcc\n"
        ".globl stress_rip\n"
        ".type stress_rip, @function\n"
        "stress_rip:\n"
        "  mov rax, qword ptr [rip + stress_bias]\n"
        "  add rax, rdi\n"
        "  ret\n"
        ".size stress_rip, . - stress_rip\n"
        // 2x + 1 when x is odd, 42 when x is even
        ".p2align 4, 0xcc\n"
        ".globl stress_jcc\n"
        ".type stress_jcc, @function\n"
        "stress_jcc:\n"
        "  test dil, 1\n"
        "  je 1f\n"
        "  lea rax, [rdi + rdi + 1]\n"
        "  ret\n"
        "1:\n"
        "  mov eax, 42\n"
        "  ret\n"
        ".size stress_jcc, . - stress_jcc\n"
        // x + 3 (32-bit), in 4 bytes: 8d 47 03 c3
        ".p2align 4, 0xcc\n"
        ".globl stress_tiny\n"
        ".type stress_tiny, @function\n"
        "stress_tiny:\n"
        "  lea eax, [rdi + 3]\n"
        "  ret\n"
        ".size stress_tiny, . - stress_tiny\n"
        ".att_syntax prefix\n");

static volatile int stop;

struct worker {
  pthread_t thread;
  uint64_t seed;
  uint64_t calls;          // loop iterations (each calls all four functions)
  uint64_t wrong;          // results that differ from the expected value
  uint64_t sum;            // of every result, recomputed by main at the end
  uint64_t first_wrong[3]; // iteration, got, expected
};

static uint64_t expected_step(uint64_t seed, uint64_t i, uint64_t bias) {
  uint64_t a = seed * 1000003 + i;
  uint64_t mix = MIX(a, a + 1, a + 2, a + 3, a + 4, a + 5);
  uint64_t rip = a + bias;
  uint64_t jcc = (a & 1) ? 2 * a + 1 : 42;
  uint32_t tiny = (uint32_t)a + 3;
  return mix + rip + jcc + tiny;
}

static void *work(void *arg) {
  struct worker *w = arg;
  uint64_t bias = stress_bias;
  for (uint64_t i = 0; !stop; i++) {
    uint64_t a = w->seed * 1000003 + i;
    uint64_t mix = stress_mix(a, a + 1, a + 2, a + 3, a + 4, a + 5);
    uint64_t rip = stress_rip(a);
    uint64_t jcc = stress_jcc(a);
    uint32_t tiny = stress_tiny((uint32_t)a);
    uint64_t got = mix + rip + jcc + tiny;
    uint64_t want = expected_step(w->seed, i, bias);
    if (got != want) {
      if (!w->wrong) {
        w->first_wrong[0] = i;
        w->first_wrong[1] = got;
        w->first_wrong[2] = want;
      }
      w->wrong++;
    }
    w->sum += got;
    w->calls = i + 1;
  }
  return NULL;
}

struct function {
  const char *name;
  const void *address;
  unsigned char bytes[SAVED_BYTES];
};

int main(int argc, char **argv) {
  int nthreads = argc > 1 ? atoi(argv[1]) : 8;
  if (nthreads < 1 || nthreads > MAX_THREADS)
    nthreads = 8;
  struct function fns[] = {
      {"stress_mix", (const void *)stress_mix, {0}},
      {"stress_rip", (const void *)stress_rip, {0}},
      {"stress_jcc", (const void *)stress_jcc, {0}},
      {"stress_tiny", (const void *)stress_tiny, {0}},
  };
  const int nfns = sizeof fns / sizeof fns[0];
  // No tracer yet: these are the bytes the linker wrote.
  for (int f = 0; f < nfns; f++)
    memcpy(fns[f].bytes, fns[f].address, SAVED_BYTES);

  static struct worker workers[MAX_THREADS];
  for (int t = 0; t < nthreads; t++) {
    workers[t].seed = (uint64_t)t + 1;
    if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
      printf("cannot start thread %d\n", t);
      return 2;
    }
  }
  printf("ready %d %p %p %p %p\n", nthreads, fns[0].address, fns[1].address,
         fns[2].address, fns[3].address);
  fflush(stdout);

  // The test closes our stdin once its last session has detached.
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {
  }
  stop = 1;

  int failed = 0;
  uint64_t calls = 0, wrong = 0;
  for (int t = 0; t < nthreads; t++) {
    pthread_join(workers[t].thread, NULL);
    struct worker *w = &workers[t];
    // The running sum, recomputed without calling the probed functions.
    uint64_t sum = 0;
    for (uint64_t i = 0; i < w->calls; i++)
      sum += expected_step(w->seed, i, stress_bias);
    if (w->wrong) {
      printf("thread %d: %llu wrong results, first at call %llu: got %llu, "
             "expected %llu\n",
             t, (unsigned long long)w->wrong,
             (unsigned long long)w->first_wrong[0],
             (unsigned long long)w->first_wrong[1],
             (unsigned long long)w->first_wrong[2]);
      failed = 1;
    }
    if (sum != w->sum) {
      printf("thread %d: sum %llu, expected %llu\n", t,
             (unsigned long long)w->sum, (unsigned long long)sum);
      failed = 1;
    }
    if (w->calls == 0) {
      printf("thread %d made no calls\n", t);
      failed = 1;
    }
    calls += w->calls;
    wrong += w->wrong;
  }
  printf("calls %llu\n", (unsigned long long)calls);
  printf("wrong %llu\n", (unsigned long long)wrong);
  int bytes_changed = 0;
  for (int f = 0; f < nfns; f++)
    if (memcmp(fns[f].bytes, fns[f].address, SAVED_BYTES) != 0) {
      printf("%s: its first %d bytes differ from before the first attach\n",
             fns[f].name, SAVED_BYTES);
      bytes_changed = 1;
    }
  printf("code %s\n", bytes_changed ? "changed" : "intact");
  return failed || bytes_changed ? 1 : 0;
}
