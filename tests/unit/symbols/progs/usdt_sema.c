// A USDT probe guarded by a semaphore, as dtrace -G would set it up:
// compiled with _SDT_HAS_SEMAPHORES, so every probe in this file records
// the address of its PROVIDER_NAME_semaphore (in section .probes).
#include <sys/sdt.h>

__extension__ unsigned short ubt_sema_semaphore __attribute__((unused))
__attribute__((section(".probes")));

void ubt_fire_sema(int v) {
  if (__builtin_expect(ubt_sema_semaphore, 0))
    DTRACE_PROBE1(ubt, sema, v);
}

int ubt_sema_value(void) {
  return ubt_sema_semaphore;
}
void *ubt_sema_address(void) {
  return &ubt_sema_semaphore;
}
