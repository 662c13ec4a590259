/* Keeps known values in every general register (but rax and rsp), in
 * xmm0-14 (ymm0-14 with AVX), in MXCSR and with the direction flag set,
 * spinning and comparing them until SIGUSR1; then prints "result 0" if
 * nothing ever changed, or the number of the register that did. Injection
 * must leave all of it exactly as it was. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile int ubt_register_check_stop;
volatile unsigned long ubt_register_check_loops;
long ubt_check_registers(int use_avx);

static void on_usr1(int sig) {
  ubt_register_check_stop = 1;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  __builtin_cpu_init();
  int avx = __builtin_cpu_supports("avx2");
  printf("ready avx=%d\n", avx);
  fflush(stdout);
  long result = ubt_check_registers(avx);
  printf("result %ld loops %lu\n", result, ubt_register_check_loops);
  return result == 0 ? 0 : 1;
}
