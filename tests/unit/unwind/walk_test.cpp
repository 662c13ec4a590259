// Walking this process's own stack: the rows of every loaded module are
// compiled from the .eh_frame in its memory (found through its
// PT_GNU_EH_FRAME header, as an in-process walker would), and the walk
// from inside a chain of frame-pointer-less functions (walk_chain.c) must
// give the return addresses glibc's backtrace() gives for the same stack.
#include "runtime/unwind/stack_walker.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <gtest/gtest.h>
#include <link.h>
#include <string>
#include <vector>

extern "C" {
typedef void (*chain_cb)(uint64_t rip, uint64_t rsp, uint64_t rbp, void **bt,
                         int nbt);
void chain_top(chain_cb cb, int depth);
}

namespace ubtrace::runtime::unwind {
namespace {

struct Loaded {
  UnwindModule module;
  CfiTable table;
  CfiRows rows;
};

// .eh_frame's address from .eh_frame_hdr (version 1, a pc-relative
// eh_frame_ptr: what every linker writes on x86-64).
uint64_t eh_frame_from_hdr(uint64_t hdr) {
  const auto *h = reinterpret_cast<const uint8_t *>(hdr);
  if (h[0] != 1 || h[1] != 0x1b) // DW_EH_PE_pcrel | DW_EH_PE_sdata4
    return 0;
  int32_t rel;
  std::memcpy(&rel, h + 4, 4);
  return hdr + 4 + rel;
}

std::vector<Loaded> load_modules() {
  std::vector<Loaded> out;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *p) {
        auto &mods = *static_cast<std::vector<Loaded> *>(p);
        uint64_t lo = UINT64_MAX, hi = 0, hdr = 0;
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const auto &ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD) {
            lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
            hi = std::max<uint64_t>(hi,
                                    info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
          }
          if (ph.p_type == PT_GNU_EH_FRAME)
            hdr = info->dlpi_addr + ph.p_vaddr;
        }
        uint64_t eh = hdr ? eh_frame_from_hdr(hdr) : 0;
        if (!eh || eh < lo || eh >= hi)
          return 0;
        Loaded m;
        m.module.lo = lo;
        m.module.hi = hi;
        m.module.bias = info->dlpi_addr;
        // In memory the section's size is not recorded: it ends with a
        // zero-length entry, within the mapping.
        CfiSection s{reinterpret_cast<const uint8_t *>(eh), hi - eh,
                     eh - info->dlpi_addr, false};
        add_cfi_rows(s, m.table);
        finish_cfi_table(m.table);
        mods.push_back(std::move(m));
        return 0;
      },
      &out);
  std::sort(out.begin(), out.end(), [](const Loaded &a, const Loaded &b) {
    return a.module.lo < b.module.lo;
  });
  for (auto &m : out) {
    m.rows = {m.table.rows.size(), m.table.rows.data()};
    m.module.table = &m.rows;
  }
  return out;
}

// The stack is walked inside the leaf's callback, while it is live: once
// the chain returns, its slots are reused by the next calls.
struct Capture {
  UnwindRegs regs;
  std::vector<uint64_t> backtrace;
  std::function<void(const UnwindRegs &)> walk;
};
Capture g_capture;

void capture(uint64_t rip, uint64_t rsp, uint64_t rbp, void **bt, int nbt) {
  g_capture.regs = {rip, rsp, rbp};
  g_capture.backtrace.assign(reinterpret_cast<uint64_t *>(bt),
                             reinterpret_cast<uint64_t *>(bt) + nbt);
  if (g_capture.walk)
    g_capture.walk(g_capture.regs);
}

std::string symbol(uint64_t addr) {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(addr), &info) || !info.dli_sname)
    return "?";
  return std::string(info.dli_sname) + "+" +
         std::to_string(addr - reinterpret_cast<uint64_t>(info.dli_saddr));
}

bool plain_read(void *dst, uint64_t addr, size_t size) {
  std::memcpy(dst, reinterpret_cast<const void *>(addr), size);
  return true;
}

TEST(StackWalker, MatchesBacktraceThroughFunctionsWithoutFramePointers) {
  auto mods = load_modules();
  ASSERT_GE(mods.size(), 2u); // this test and libc at least
  std::vector<UnwindModule> table;
  for (auto &m : mods)
    table.push_back(m.module);
  uint64_t out[128];
  WalkStats stats;
  size_t n = 0;
  g_capture.walk = [&](const UnwindRegs &regs) {
    n = walk_stack(table.data(), table.size(), regs, out, 128, plain_read,
                   &stats);
  };
  chain_top(capture, 12);
  g_capture.walk = nullptr;
  const auto &bt = g_capture.backtrace;
  // backtrace()'s first entry is its own return address in the leaf;
  // from the leaf's caller on, the two walks must agree.
  ASSERT_GE(bt.size(), 16u);
  ASSERT_GE(n, 16u);
  size_t common = std::min<size_t>(n, bt.size());
  for (size_t i = 1; i < common; i++)
    EXPECT_EQ(out[i], bt[i])
        << "frame " << i << ": " << symbol(out[i]) << " vs " << symbol(bt[i]);
  // Every frame of the chain needed CFI (no frame pointers there).
  EXPECT_GE(stats.cfi_steps, 14u);
}

TEST(StackWalker, CorruptStacksEndTheWalk) {
  auto mods = load_modules();
  std::vector<UnwindModule> table;
  for (auto &m : mods)
    table.push_back(m.module);
  uint64_t out[64];
  // Unreadable memory ends the walk where it is met: with every read
  // failing, only the probed ip; with three reads allowed, at most the
  // frames those reads found.
  for (int allowed : {0, 3}) {
    int reads = 0;
    size_t n = 0;
    g_capture.walk = [&](const UnwindRegs &regs) {
      n = walk_stack(table.data(), table.size(), regs, out, 64,
                     [&](void *dst, uint64_t addr, size_t size) {
                       if (++reads > allowed)
                         return false;
                       return plain_read(dst, addr, size);
                     });
    };
    chain_top(capture, 3);
    g_capture.walk = nullptr;
    if (allowed == 0)
      EXPECT_EQ(n, 1u);
    else
      EXPECT_TRUE(n > 1 && n <= 4u) << n;
  }
  // A stack pointer that does not move towards older frames (a loop)
  // ends it too.
  UnwindRegs loop = g_capture.regs;
  uint64_t fake[4] = {0, 0, 0, 0};
  loop.rip = 0x1; // in no module: the rbp chain
  loop.rsp = reinterpret_cast<uint64_t>(&fake[0]);
  loop.rbp = reinterpret_cast<uint64_t>(&fake[0]);
  fake[0] = loop.rbp; // saved rbp points at itself
  fake[1] = 0x1234;   // return address
  size_t n = walk_stack(table.data(), table.size(), loop, out, 64, plain_read);
  EXPECT_EQ(n, 2u);
}

// Not a benchmark (bench/ measures): a walk of a 16-frame stack must not
// take milliseconds. Printed for the record.
TEST(StackWalker, SixteenFrameWalkCost) {
  auto mods = load_modules();
  std::vector<UnwindModule> table;
  for (auto &m : mods)
    table.push_back(m.module);
  uint64_t out[16];
  constexpr int kRounds = 100000;
  size_t total = 0;
  std::chrono::steady_clock::time_point t0, t1;
  g_capture.walk = [&](const UnwindRegs &regs) {
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; i++)
      total +=
          walk_stack(table.data(), table.size(), regs, out, 16, plain_read);
    t1 = std::chrono::steady_clock::now();
  };
  chain_top(capture, 14);
  g_capture.walk = nullptr;
  EXPECT_EQ(total, size_t(kRounds) * 16);
  std::printf("16-frame CFI walk: %.1f ns\n",
              std::chrono::duration<double, std::nano>(t1 - t0).count() /
                  kRounds);
}

} // namespace
} // namespace ubtrace::runtime::unwind
