#include "runtime/agent/got_interpose.h"

#include "runtime/hook/memory_map.h"

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace ubtrace::agent {
namespace {

const Interposer *g_table = nullptr;
size_t g_count = 0;
std::mutex g_lock;

constexpr uintptr_t kPage = 4096;

struct Walk {
  uintptr_t skip[4] = {}; // load bases of objects left alone
  const runtime::hook::MemoryMap *map = nullptr;
  bool ok = true;
};

void *interposer_for(const char *name) {
  for (size_t i = 0; i < g_count; ++i)
    if (strcmp(g_table[i].name, name) == 0)
      return g_table[i].fn;
  return nullptr;
}

// Writes fn into the GOT slot, making its page writable for the store if
// RELRO made it read-only.
bool write_slot(void **slot, void *fn, const runtime::hook::MemoryMap &map) {
  if (*slot == fn)
    return true;
  auto addr = reinterpret_cast<uintptr_t>(slot);
  const runtime::hook::MemoryRegion *r = map.find(addr);
  if (!r)
    return false;
  auto page = reinterpret_cast<void *>(addr & ~(kPage - 1));
  bool writable = r->prot & PROT_WRITE;
  if (!writable && mprotect(page, kPage, r->prot | PROT_WRITE) != 0)
    return false;
  __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
  if (!writable)
    mprotect(page, kPage, r->prot);
  return true;
}

void interpose_relocations(const ElfW(Rela) * rela, size_t bytes,
                           uintptr_t base, const ElfW(Sym) * symtab,
                           const char *strtab, Walk &walk) {
  for (size_t i = 0; i < bytes / sizeof *rela; ++i) {
    uint32_t type = ELF64_R_TYPE(rela[i].r_info);
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
        type != R_X86_64_64)
      continue;
    uint32_t sym = ELF64_R_SYM(rela[i].r_info);
    if (sym == 0)
      continue;
    void *fn = interposer_for(strtab + symtab[sym].st_name);
    if (!fn)
      continue;
    auto **slot = reinterpret_cast<void **>(base + rela[i].r_offset);
    if (!write_slot(slot, fn, *walk.map))
      walk.ok = false;
  }
}

int visit(struct dl_phdr_info *info, size_t, void *data) {
  auto &walk = *static_cast<Walk *>(data);
  for (uintptr_t skip : walk.skip)
    if (skip && skip == info->dlpi_addr)
      return 0;
  const ElfW(Dyn) *dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr +
                                                info->dlpi_phdr[i].p_vaddr);
  if (!dyn)
    return 0;
  const ElfW(Sym) *symtab = nullptr;
  const char *strtab = nullptr;
  const ElfW(Rela) *jmprel = nullptr, *rela = nullptr;
  size_t jmprel_bytes = 0, rela_bytes = 0;
  // The dynamic linker has relocated these d_ptr values to addresses.
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    switch (dyn->d_tag) {
    case DT_SYMTAB:
      symtab = reinterpret_cast<const ElfW(Sym) *>(dyn->d_un.d_ptr);
      break;
    case DT_STRTAB:
      strtab = reinterpret_cast<const char *>(dyn->d_un.d_ptr);
      break;
    case DT_JMPREL:
      jmprel = reinterpret_cast<const ElfW(Rela) *>(dyn->d_un.d_ptr);
      break;
    case DT_PLTRELSZ:
      jmprel_bytes = dyn->d_un.d_val;
      break;
    case DT_RELA:
      rela = reinterpret_cast<const ElfW(Rela) *>(dyn->d_un.d_ptr);
      break;
    case DT_RELASZ:
      rela_bytes = dyn->d_un.d_val;
      break;
    default:
      break;
    }
  }
  if (!symtab || !strtab)
    return 0;
  if (jmprel)
    interpose_relocations(jmprel, jmprel_bytes, info->dlpi_addr, symtab, strtab,
                          walk);
  if (rela)
    interpose_relocations(rela, rela_bytes, info->dlpi_addr, symtab, strtab,
                          walk);
  return 0;
}

uintptr_t base_of(const void *in) {
  Dl_info info{};
  return dladdr(in, &info) ? reinterpret_cast<uintptr_t>(info.dli_fbase) : 0;
}

} // namespace

void offer_interposers(const Interposer *table, size_t count) {
  std::lock_guard<std::mutex> guard(g_lock);
  g_table = table;
  g_count = count;
}

bool interpose_loaded_objects() {
  std::lock_guard<std::mutex> guard(g_lock);
  if (!g_table)
    return false;
  Result<runtime::hook::MemoryMap> map = runtime::hook::MemoryMap::read_self();
  if (!map)
    return false;
  Walk walk;
  walk.map = &*map;
  // libc (its calls to itself do not go through these), the dynamic
  // linker, and ubtrace's libraries (the preload's own calls must reach
  // libc).
  walk.skip[0] = base_of(dlsym(RTLD_DEFAULT, "sigaction"));
  walk.skip[1] = base_of(dlsym(RTLD_DEFAULT, "_dl_debug_state"));
  walk.skip[2] =
      base_of(reinterpret_cast<const void *>(&interpose_loaded_objects));
  walk.skip[3] = base_of(g_table[0].fn);
  dl_iterate_phdr(visit, &walk);
  return walk.ok;
}

} // namespace ubtrace::agent
