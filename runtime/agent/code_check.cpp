#include "runtime/agent/code_check.h"

#include <link.h>

namespace ubtrace::agent {
namespace {

struct Walk {
  std::span<const PatchedCode> patches;
  std::vector<bool> *intact;
};

int check_object(struct dl_phdr_info *info, size_t, void *arg) {
  auto &w = *static_cast<Walk *>(arg);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !(ph.p_flags & PF_R))
      continue;
    uint64_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    for (size_t k = 0; k < w.patches.size(); k++) {
      const PatchedCode &p = w.patches[k];
      if ((*w.intact)[k] || p.at < lo || p.at + p.len > hi)
        continue;
      bool same = true;
      for (size_t b = 0; b < p.len; b++)
        same &=
            *reinterpret_cast<const volatile uint8_t *>(p.at + b) == p.bytes[b];
      (*w.intact)[k] = same;
    }
  }
  return 0;
}

struct DataWalk {
  uint64_t addr, base;
  bool found = false;
};

int find_data(struct dl_phdr_info *info, size_t, void *arg) {
  auto &w = *static_cast<DataWalk *>(arg);
  if (info->dlpi_addr != w.base)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    uint64_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && w.addr >= lo &&
        w.addr < lo + ph.p_memsz)
      w.found = true;
  }
  return w.found ? 1 : 0;
}

int list_object(struct dl_phdr_info *info, size_t, void *arg) {
  static_cast<std::vector<LoadedObject> *>(arg)->push_back(
      {info->dlpi_addr, info->dlpi_name ? info->dlpi_name : ""});
  return 0;
}

int first_object(struct dl_phdr_info *info, size_t size, void *arg) {
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *static_cast<uint64_t *>(arg) = info->dlpi_subs;
  return 1; // the counters are the same in every entry
}

} // namespace

std::vector<bool> patches_intact(std::span<const PatchedCode> patches) {
  std::vector<bool> intact(patches.size(), false);
  Walk w{patches, &intact};
  dl_iterate_phdr(check_object, &w);
  return intact;
}

bool data_of_object_loaded(uint64_t addr, uint64_t base) {
  DataWalk w{addr, base};
  dl_iterate_phdr(find_data, &w);
  return w.found;
}

std::vector<LoadedObject> loaded_objects() {
  std::vector<LoadedObject> out;
  dl_iterate_phdr(list_object, &out);
  return out;
}

uint64_t objects_unloaded() {
  uint64_t subs = 0;
  dl_iterate_phdr(first_object, &subs);
  return subs;
}

} // namespace ubtrace::agent
