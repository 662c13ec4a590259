#include "runtime/helpers/thread_identity.h"

#include "runtime/probe_safe.h"

#include <atomic>
#include <dlfcn.h>
#include <sys/syscall.h>

namespace ubtrace::runtime::helpers {
namespace {

long g_tid_offset = -1; // in glibc's struct pthread; set once

uint64_t thread_self() { // glibc's THREAD_SELF (tcbhead_t.self)
  uint64_t self;
  __asm__("mov %%fs:0x10, %0" : "=r"(self));
  return self;
}

} // namespace

void prepare_thread_identity() {
  static std::atomic<bool> done{false};
  if (done.exchange(true))
    return;
  // {bits, count, offset}; checked against this thread's real id.
  const auto *field = static_cast<const uint32_t *>(
      dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid"));
  long tid = probe_safe::raw_syscall(SYS_gettid);
  if (field && field[0] == 32 && field[1] == 1 &&
      *reinterpret_cast<const int32_t *>(thread_self() + field[2]) == tid)
    g_tid_offset = field[2];
}

long thread_id_offset() {
  return g_tid_offset;
}

const volatile int32_t *thread_id_word() {
  if (g_tid_offset < 0)
    return nullptr;
  return reinterpret_cast<const volatile int32_t *>(thread_self() +
                                                    g_tid_offset);
}

} // namespace ubtrace::runtime::helpers
