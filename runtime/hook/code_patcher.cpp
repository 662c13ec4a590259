#include "runtime/hook/code_patcher.h"

#include "runtime/hook/cpu_features.h"
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

constexpr uint64_t kBlock = 16;

PatchCounts g_counts; // under the installer's lock

uint64_t block_of(const Site &site) {
  return site.plan.patch_start & ~(kBlock - 1);
}

// Replaces the aligned 16 bytes at `block` if they still are `expect`.
bool replace_block(uint64_t block, const uint8_t *expect, const uint8_t *want) {
  uint64_t lo, hi, new_lo, new_hi;
  memcpy(&lo, expect, 8);
  memcpy(&hi, expect + 8, 8);
  memcpy(&new_lo, want, 8);
  memcpy(&new_hi, want + 8, 8);
  bool replaced;
  __asm__ volatile(
      "lock cmpxchg16b %1\n\tsete %0"
      : "=q"(replaced),
        "+m"(*reinterpret_cast<volatile unsigned __int128 *>(block)), "+a"(lo),
        "+d"(hi)
      : "b"(new_lo), "c"(new_hi)
      : "memory", "cc");
  return replaced;
}

// Writes image[0, patch_len) at the patch address in one store.
Result<void> write_atomically(const Site &site, const uint8_t *image) {
  uint64_t block = block_of(site);
  uint8_t now[kBlock], want[kBlock];
  for (uint32_t i = 0; i < kBlock; ++i)
    now[i] = want[i] = peek(block + i);
  uint64_t at = site.plan.patch_start - block;
  for (uint32_t i = 0; i < site.patch_len; ++i)
    want[at + i] = image[i];
  if (!replace_block(block, now, want))
    return make_error("the code at the hook changed while it was patched");
  sync_cores();
  return {};
}

} // namespace

PatchCounts patch_counts() {
  return g_counts;
}

bool patches_atomically(const Site &site) {
  return site.plan.mode == PatchMode::Jump && cpu_features().cmpxchg16b &&
         site.plan.patch_start + site.patch_len <= block_of(site) + kBlock;
}

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
  if (patches_atomically(site)) {
    Result<void> written = write_atomically(site, site.patched);
    if (!written) {
      set_traps_active(site, false);
      return written;
    }
    ++g_counts.atomic;
    site.attached = true;
    return {};
  }
  ++g_counts.int3_first;
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
  for (uint64_t at :
       {site.plan.patch_start, site.plan.patch_start + site.patch_len - 1}) {
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
  if (patches_atomically(site)) {
    Result<void> written = write_atomically(site, site.original);
    if (!written)
      return written;
    ++g_counts.atomic;
    set_traps_active(site, false);
    site.attached = false;
    return {};
  }
  ++g_counts.int3_first;
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
