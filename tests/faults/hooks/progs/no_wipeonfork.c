// LD_PRELOAD shim: a kernel before 4.14, which has no MADV_WIPEONFORK.
// madvise() with that advice fails with EINVAL, as such a kernel answers,
// and says so on stderr (a test knows the shim was in the path); every
// other advice goes to the kernel. The agent, loaded after it, then takes
// its fallback paths (fork children noticed by pthread_atfork only).
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

int madvise(void *addr, size_t len, int advice) {
  if (advice == MADV_WIPEONFORK) {
    static const char say[] = "shim: MADV_WIPEONFORK refused\n";
    (void)!write(2, say, strlen(say));
    errno = EINVAL;
    return -1;
  }
  long rc = syscall(SYS_madvise, addr, len, advice);
  return rc == 0 ? 0 : -1;
}
