// Installs its own SIGTRAP handler once running (after ubtrace's agent put
// its trap handlers in), raises one trap of its own, then calls a function
// too short for a jump (the probes reach it through an int3). Its handler
// must see its own trap only, and every call must return the right value.
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile long own_traps;
static void on_trap(int sig) {
  (void)sig;
  own_traps++;
}

// 4 bytes: lea eax, [rdi+1]; ret.
__asm__(".text\n"
        ".globl tiny\n"
        ".type tiny, @function\n"
        "tiny:\n"
        "  lea 1(%rdi), %eax\n"
        "  ret\n"
        ".size tiny, .-tiny\n");
int tiny(int x);

int main(int argc, char **argv) {
  int use_signal = argc > 1 && strcmp(argv[1], "signal") == 0;
  if (use_signal) {
    signal(SIGTRAP, on_trap);
  } else {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_trap;
    sigaction(SIGTRAP, &sa, NULL);
  }
  raise(SIGTRAP);
  long sum = 0;
  for (int i = 0; i < 100; i++)
    sum += tiny(i);
  printf("own traps %ld, sum %ld\n", own_traps, sum);
  return 0;
}
