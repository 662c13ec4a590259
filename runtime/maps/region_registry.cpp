#include "runtime/maps/region_registry.h"

#include "runtime/probe_safe.h"

#include <atomic>
#include <sys/syscall.h>

namespace ubtrace::runtime::maps::registry {
namespace {

// Static storage and atomics only: acquire/release run on the probe path of
// the traced process, where neither the heap nor a lock is welcome.
struct Mapping {
  std::atomic<uintptr_t> base{0};
  std::atomic<uint64_t> size{0};
  std::atomic<int32_t> claims{0}; // -1: being unmapped
  std::atomic<bool> orphaned{false};
};

constexpr size_t kMaxMappings = 64;
Mapping g_mappings[kMaxMappings];

Mapping *find(const void *base) {
  const auto wanted = reinterpret_cast<uintptr_t>(base);
  for (Mapping &m : g_mappings)
    if (m.base.load(std::memory_order_acquire) == wanted)
      return &m;
  return nullptr;
}

void unmap_if_unused(Mapping &m) {
  if (!m.orphaned.load(std::memory_order_acquire))
    return;
  int32_t idle = 0;
  if (!m.claims.compare_exchange_strong(idle, -1, std::memory_order_acq_rel))
    return;
  // A raw system call: the last release may run on the probe path.
  probe_safe::raw_syscall(
      SYS_munmap, static_cast<long>(m.base.load(std::memory_order_relaxed)),
      static_cast<long>(m.size.load(std::memory_order_relaxed)));
  m.orphaned.store(false, std::memory_order_relaxed);
  m.base.store(0, std::memory_order_release);
}

} // namespace

bool add(void *base, uint64_t size) {
  for (Mapping &m : g_mappings) {
    uintptr_t free_entry = 0;
    // Claim the entry with a sentinel so that no lookup matches it while the
    // other fields are set.
    if (!m.base.compare_exchange_strong(free_entry, 1,
                                        std::memory_order_acq_rel))
      continue;
    m.size.store(size, std::memory_order_relaxed);
    m.claims.store(0, std::memory_order_relaxed);
    m.orphaned.store(false, std::memory_order_relaxed);
    m.base.store(reinterpret_cast<uintptr_t>(base), std::memory_order_release);
    return true;
  }
  return false;
}

bool acquire(const void *base) {
  Mapping *m = find(base);
  if (m == nullptr)
    return false;
  int32_t claims = m->claims.load(std::memory_order_relaxed);
  do {
    if (claims < 0)
      return false;
  } while (!m->claims.compare_exchange_weak(claims, claims + 1,
                                            std::memory_order_acq_rel));
  return true;
}

void release(const void *base) {
  Mapping *m = find(base);
  if (m == nullptr)
    return;
  if (m->claims.fetch_sub(1, std::memory_order_acq_rel) == 1)
    unmap_if_unused(*m);
}

void orphan(void *base) {
  Mapping *m = find(base);
  if (m == nullptr)
    return;
  m->orphaned.store(true, std::memory_order_release);
  unmap_if_unused(*m);
}

void reset_claims_in_child() {
  for (Mapping &m : g_mappings)
    if (m.base.load(std::memory_order_relaxed) > 1)
      m.claims.store(0, std::memory_order_relaxed);
}

} // namespace ubtrace::runtime::maps::registry
