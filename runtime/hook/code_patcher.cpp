#include "runtime/hook/code_patcher.h"

#include "runtime/hook/cpu_sync.h"
#include "runtime/hook/trap_bytes.h"
#include "runtime/hook/trap_table.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/mman.h>

namespace ubtrace::runtime::hook {
namespace {

constexpr uint64_t kPage = 4096;

// Makes the pages of [start, start+len) writable for its lifetime.
class WritableWindow {
public:
  WritableWindow() = default;
  WritableWindow(const WritableWindow &) = delete;
  WritableWindow &operator=(const WritableWindow &) = delete;
  ~WritableWindow() {
    for (int i = 0; i < count_; ++i)
      if (!(prot_[i] & PROT_WRITE))
        mprotect(reinterpret_cast<void *>(page_[i]), kPage, prot_[i]);
  }

  Result<void> open(uint64_t start, size_t len, const MemoryMap &map) {
    for (uint64_t page = start & ~(kPage - 1); page < start + len;
         page += kPage) {
      const MemoryRegion *r = map.find(page);
      if (!r)
        return make_error("code page is not mapped");
      page_[count_] = page;
      prot_[count_] = r->prot;
      ++count_;
      if (r->prot & PROT_WRITE)
        continue;
      if (mprotect(reinterpret_cast<void *>(page), kPage,
                   r->prot | PROT_WRITE) != 0)
        return make_error(std::string("cannot make code writable: ") +
                          strerror(errno));
    }
    return {};
  }

private:
  uint64_t page_[2] = {};
  int prot_[2] = {};
  int count_ = 0;
};

void poke(uint64_t address, uint8_t value) {
  *reinterpret_cast<volatile uint8_t *>(address) = value;
}

uint8_t peek(uint64_t address) {
  return *reinterpret_cast<volatile const uint8_t *>(address);
}

// Whether byte i of the patch is an instruction start of the original code
// other than the first.
bool is_inner_start(const Site &site, uint32_t i) {
  for (uint32_t k = 1; k < site.plan.insn_count; ++k)
    if (site.plan.insns[k].address == site.plan.patch_start + i)
      return true;
  return false;
}

void set_traps_active(const Site &site, bool active) {
  trap_table_set_active(site.plan.patch_start, active);
  for (uint32_t k = 1; k < site.plan.insn_count; ++k)
    trap_table_set_active(site.plan.insns[k].address, active);
}

Result<void> check_bytes(const Site &site, const uint8_t *expected,
                         const char *what) {
  for (uint32_t i = 0; i < site.patch_len; ++i) {
    if (peek(site.plan.patch_start + i) == expected[i])
      continue;
    char msg[160];
    snprintf(msg, sizeof msg,
             "the code at 0x%llx is not %s (changed by someone else?)",
             static_cast<unsigned long long>(site.plan.patch_start + i), what);
    return make_error(msg);
  }
  return {};
}

// Writes bytes [1, patch_len) of `image` that pass `select`.
template <class Select>
bool write_rest(const Site &site, const uint8_t *image, Select select) {
  bool wrote = false;
  for (uint32_t i = 1; i < site.patch_len; ++i) {
    uint64_t at = site.plan.patch_start + i;
    if (!select(i) || peek(at) == image[i])
      continue;
    poke(at, image[i]);
    wrote = true;
  }
  return wrote;
}

} // namespace

Result<void> attach_patch(Site &site, const MemoryMap &map) {
  if (site.attached)
    return {};
  Result<void> same = check_bytes(site, site.original, "what was planned");
  if (!same)
    return same;
  WritableWindow window;
  Result<void> opened = window.open(site.plan.patch_start, site.patch_len, map);
  if (!opened)
    return opened;
  uint64_t p = site.plan.patch_start;
  set_traps_active(site, true);
  poke(p, kInt3);
  sync_cores();
  if (write_rest(site, site.patched,
                 [&](uint32_t i) { return is_inner_start(site, i); }))
    sync_cores();
  if (write_rest(site, site.patched,
                 [&](uint32_t i) { return !is_inner_start(site, i); }))
    sync_cores();
  if (site.patched[0] != kInt3) {
    poke(p, site.patched[0]);
    sync_cores();
  }
  site.attached = true;
  return {};
}

void forget_patch(Site &site) {
  set_traps_active(site, false);
  site.attached = false;
}

Result<void> detach_patch(Site &site, const MemoryMap &map) {
  if (!site.attached)
    return {};
  // The code is unmapped (its library was unloaded): nothing to restore,
  // and reading there would fault.
  for (uint64_t at : {site.plan.patch_start, site.plan.patch_start + site.patch_len - 1}) {
    const MemoryRegion *r = map.find(at);
    if (!r || !(r->prot & PROT_READ)) {
      forget_patch(site);
      return {};
    }
  }
  Result<void> same = check_bytes(site, site.patched, "our patch");
  if (!same)
    return same;
  WritableWindow window;
  Result<void> opened = window.open(site.plan.patch_start, site.patch_len, map);
  if (!opened)
    return opened;
  uint64_t p = site.plan.patch_start;
  if (site.patched[0] != kInt3) {
    poke(p, kInt3);
    sync_cores();
  }
  if (write_rest(site, site.original,
                 [&](uint32_t i) { return !is_inner_start(site, i); }))
    sync_cores();
  if (write_rest(site, site.original,
                 [&](uint32_t i) { return is_inner_start(site, i); }))
    sync_cores();
  poke(p, site.original[0]);
  sync_cores();
  set_traps_active(site, false);
  site.attached = false;
  return {};
}

} // namespace ubtrace::runtime::hook
