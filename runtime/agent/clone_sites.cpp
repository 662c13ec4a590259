#include "runtime/agent/clone_sites.h"

#include "runtime/agent/syscalls.h"
#include "runtime/helpers/thread_id_reset.h"
#include "runtime/hook/hook.h"

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <link.h>

// `syscall; ret` for the calls the entry does not see (never taken: each
// site sets eax to a clone-family number).
extern "C" void ubt_clone_sites_direct();
__asm__(R"(
  .text
  .p2align 4
  .hidden ubt_clone_sites_direct
  .globl ubt_clone_sites_direct
  .type ubt_clone_sites_direct, @function
ubt_clone_sites_direct:
  syscall
  ret
  .size ubt_clone_sites_direct, .-ubt_clone_sites_direct
)");

// The sites' entry (syscall_fast.cpp): leaves the call to the trampoline.
extern "C" __attribute__((visibility("hidden"))) void
ubt_clone_site_entry(ubtrace::runtime::hook::PtRegs *regs);

namespace ubtrace::agent::clone_sites {
namespace {

constexpr size_t kMaxSites = 8;
uint64_t g_sites[kMaxSites];
size_t g_count = 0;
bool g_tried = false; // since the last restore()

// Calls the entry sees: the clone family. Every rewritten site sets eax
// to one of them right before its `syscall`, so the others never come.
uint8_t g_slow[65536];

// `mov eax, NR; syscall` as glibc writes it for NR 56 (clone), 58
// (vfork) and 435 (clone3).
constexpr uint8_t kPatterns[][7] = {
    {0xb8, 0x38, 0x00, 0x00, 0x00, 0x0f, 0x05},
    {0xb8, 0x3a, 0x00, 0x00, 0x00, 0x0f, 0x05},
    {0xb8, 0xb3, 0x01, 0x00, 0x00, 0x0f, 0x05},
};

struct Scan {
  uint64_t base;
  uint64_t found[kMaxSites];
  size_t n = 0;
};

// The `syscall`s of the patterns in the executable segments of the object
// loaded at `base`.
int scan_object(dl_phdr_info *info, size_t, void *data) {
  auto *scan = static_cast<Scan *>(data);
  if (info->dlpi_addr != scan->base)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
      continue;
    const auto *text =
        reinterpret_cast<const uint8_t *>(info->dlpi_addr + ph.p_vaddr);
    for (const auto &pattern : kPatterns) {
      const uint8_t *p = text, *end = text + ph.p_filesz;
      while (scan->n < kMaxSites && p < end) {
        const void *hit = memmem(p, size_t(end - p), pattern, sizeof pattern);
        if (!hit)
          break;
        p = static_cast<const uint8_t *>(hit);
        scan->found[scan->n++] = reinterpret_cast<uint64_t>(p) + 5;
        p += sizeof pattern;
      }
    }
  }
  return 1;
}

// The function around the `syscall` at `at`. glibc's clone and clone3
// end their call frame information right before it (the child comes back
// on another stack): there, the part before it through the gap that
// follows, up to the next part's start (the child's path), no further.
runtime::hook::FunctionBounds bounds_around(uint64_t at) {
  runtime::hook::FunctionBounds f = syscalls::function_of(at);
  if (f.size)
    return f;
  runtime::hook::FunctionBounds before = syscalls::function_of(at - 1);
  if (!before.size || before.start + before.size != at)
    return {};
  constexpr uint64_t kMaxGap = 64;
  for (uint64_t pc = at + 2; pc < at + kMaxGap; pc++)
    if (runtime::hook::FunctionBounds next = syscalls::function_of(pc);
        next.size)
      return next.start == pc ? runtime::hook::FunctionBounds{before.start,
                                                              pc - before.start}
                              : runtime::hook::FunctionBounds{};
  return {};
}

} // namespace

size_t rewrite() {
  if (g_tried)
    return g_count;
  g_tried = true;
  // libc, found by its vfork (the agent calls none of these itself).
  Dl_info info{};
  void *vfork_at = dlsym(RTLD_DEFAULT, "vfork");
  if (!vfork_at || !dladdr(vfork_at, &info) || !info.dli_fbase)
    return 0;
  Scan scan{reinterpret_cast<uint64_t>(info.dli_fbase), {}, 0};
  dl_iterate_phdr(scan_object, &scan);
  g_slow[56] = g_slow[58] = g_slow[435] = 1;
  runtime::hook::SyscallPath path;
  path.entry = &ubt_clone_site_entry;
  path.slow = g_slow;
  path.direct = reinterpret_cast<uint64_t>(&ubt_clone_sites_direct);
  path.tls_word_after = runtime::helpers::thread_id_word_offset();
  for (size_t i = 0; i < scan.n; i++) {
    // The bytes must be instructions of a function the unwinder knows
    // (install_syscall_site decodes it from its start): a match inside
    // another instruction is refused there.
    runtime::hook::FunctionBounds f = bounds_around(scan.found[i]);
    if (f.size && runtime::hook::install_syscall_site(scan.found[i], f, path))
      g_sites[g_count++] = scan.found[i];
  }
  return g_count;
}

void restore() {
  for (size_t i = 0; i < g_count; i++)
    (void)runtime::hook::remove_syscall_site(g_sites[i]);
  g_count = 0;
  g_tried = false;
}

} // namespace ubtrace::agent::clone_sites
