#include "runtime/hook/cpu_sync.h"

#include <cerrno>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::runtime::hook {
namespace {

long membarrier(int cmd) {
  return syscall(SYS_membarrier, cmd, 0, 0);
}

// Issues cmd, registering with reg_cmd when the kernel says we have not
// (first use, or a child after fork). False: not available.
bool issue(int cmd, int reg_cmd) {
  if (membarrier(cmd) == 0)
    return true;
  if (errno != EPERM)
    return false;
  if (membarrier(reg_cmd) != 0)
    return false;
  return membarrier(cmd) == 0;
}

void shootdown_fallback() {
  static void *page = nullptr; // installer-side, under its lock
  if (!page) {
    page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
      page = nullptr;
      return;
    }
  }
  // The page must be present for the protection change to need a flush.
  *static_cast<volatile char *>(page) = 1;
  mprotect(page, 4096, PROT_READ);
  mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

} // namespace

void sync_cores() {
  if (issue(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE))
    return;
  if (issue(MEMBARRIER_CMD_PRIVATE_EXPEDITED,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
    return;
  shootdown_fallback();
}

void barrier_all() {
  if (issue(MEMBARRIER_CMD_PRIVATE_EXPEDITED,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
    return;
  shootdown_fallback();
}

} // namespace ubtrace::runtime::hook
