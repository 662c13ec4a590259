#include "runtime/unwind/loaded_modules.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <link.h>
#include <map>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <vector>

namespace ubtrace::runtime::unwind {

namespace {

constexpr size_t kRing = 8;

struct Registry {
  // Per file: its rows, never freed.
  std::map<std::tuple<uint64_t, uint64_t, std::string, uint64_t>, CfiRows *>
      by_file;
  size_t row_bytes = 0;
  // A published set: its size and its modules together behind the one
  // pointer a walk loads.
  struct Set {
    size_t count = 0;
    UnwindModule modules[kMaxModules];
  };
  Set ring[kRing];
  size_t next = 0;
};

// Whether a program walks stacks; nothing is allocated until it does.
std::atomic<bool> g_enabled{false};

Registry &registry() {
  static Registry *r = new Registry; // never destroyed: walks may run late
  return *r;
}

std::atomic<const Registry::Set *> g_published{nullptr};

// .eh_frame's address from .eh_frame_hdr (version 1 with a pc-relative
// 4-byte eh_frame_ptr, as linkers write it on x86-64), or 0.
uint64_t eh_frame_of(uint64_t hdr) {
  const auto *h = reinterpret_cast<const uint8_t *>(hdr);
  if (h[0] != 1 || h[1] != 0x1b)
    return 0;
  int32_t rel;
  std::memcpy(&rel, h + 4, 4);
  return hdr + 4 + static_cast<int64_t>(rel);
}

struct Listing {
  Registry *reg;
  std::vector<UnwindModule> modules;
  RefreshStats stats;
};

int list_one(dl_phdr_info *info, size_t, void *p) {
  auto &l = *static_cast<Listing *>(p);
  uint64_t lo = UINT64_MAX, hi = 0, hdr = 0, eh_end = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const auto &ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && ph.p_memsz > 0) {
      lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
      hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    }
    if (ph.p_type == PT_GNU_EH_FRAME)
      hdr = info->dlpi_addr + ph.p_vaddr;
  }
  if (lo >= hi)
    return 0;
  l.stats.modules++;
  UnwindModule m;
  m.lo = lo;
  m.hi = hi;
  m.bias = info->dlpi_addr;
  uint64_t eh = hdr ? eh_frame_of(hdr) : 0;
  // The section ends with a zero-length entry; bound it by the loaded
  // segment that holds it.
  for (int i = 0; eh && i < info->dlpi_phnum; i++) {
    const auto &ph = info->dlpi_phdr[i];
    uint64_t s = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && eh >= s && eh < s + ph.p_filesz)
      eh_end = s + ph.p_filesz;
  }
  if (eh && eh_end > eh) {
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
                                                             : "/proc/self/exe";
    struct stat st{};
    bool known = ::stat(name, &st) == 0;
    auto key = std::make_tuple(
        known ? uint64_t(st.st_dev) : 0, known ? uint64_t(st.st_ino) : 0,
        known ? std::string() : std::string(name) + "@" + std::to_string(lo),
        eh - info->dlpi_addr);
    Registry &reg = *l.reg;
    auto it = reg.by_file.find(key);
    if (it == reg.by_file.end()) {
      CfiRows *rows = nullptr;
      if (reg.row_bytes < kMaxRowBytes) {
        CfiTable table;
        add_cfi_rows({reinterpret_cast<const uint8_t *>(eh), eh_end - eh,
                      eh - info->dlpi_addr, false},
                     table);
        finish_cfi_table(table);
        size_t bytes = table.rows.size() * sizeof(CfiRow);
        if (reg.row_bytes + bytes <= kMaxRowBytes) {
          auto *copy = new CfiRow[table.rows.size()];
          std::copy(table.rows.begin(), table.rows.end(), copy);
          rows = new CfiRows{table.rows.size(), copy};
          reg.row_bytes += bytes;
          l.stats.rows_built += table.rows.size();
        }
      }
      if (!rows)
        l.stats.over_budget++;
      it = reg.by_file.emplace(key, rows).first;
    }
    m.table = it->second;
  }
  if (m.table)
    l.stats.with_rows++;
  if (l.modules.size() < kMaxModules)
    l.modules.push_back(m);
  return 0;
}

} // namespace

ModuleSet loaded_modules() {
  // One load: the set's count and modules come together. (A walk that
  // outlives kRing - 1 more refreshes could see its buffer rewritten:
  // the count is clamped, every entry stays a valid module.)
  ModuleSet s;
  const Registry::Set *set = g_published.load(std::memory_order_acquire);
  if (!set)
    return s;
  s.modules = set->modules;
  s.count = set->count;
  if (s.count > kMaxModules)
    s.count = kMaxModules;
  return s;
}

RefreshStats refresh_loaded_modules() {
  Registry &reg = registry();
  Listing l{&reg, {}, {}};
  dl_iterate_phdr(&list_one, &l);
  std::sort(
      l.modules.begin(), l.modules.end(),
      [](const UnwindModule &a, const UnwindModule &b) { return a.lo < b.lo; });
  Registry::Set &set = reg.ring[reg.next];
  reg.next = (reg.next + 1) % kRing;
  std::copy(l.modules.begin(), l.modules.end(), set.modules);
  set.count = l.modules.size();
  g_published.store(&set, std::memory_order_release);
  return l.stats;
}

bool loaded_modules_enabled() {
  return g_enabled.load(std::memory_order_acquire);
}
void enable_loaded_modules() {
  g_enabled.store(true, std::memory_order_release);
}

} // namespace ubtrace::runtime::unwind
