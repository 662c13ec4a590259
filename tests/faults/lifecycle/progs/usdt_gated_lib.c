// libusdt_gated.so: a library with a USDT probe behind a semaphore, in
// the shape dlclose_churn calls (lib_checksum): the trace raises the
// semaphore of each copy it hooks and must never write to it once the
// library is unloaded.
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short ubt_checksum_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) unsigned lib_checksum(const unsigned char *p, int n) {
  if (ubt_checksum_semaphore)
    DTRACE_PROBE1(ubt, checksum, n);
  return (unsigned)n + (p ? p[0] : 0u);
}
