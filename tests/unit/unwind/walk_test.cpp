// Walking this process's own stack: the rows of every loaded module are
// compiled from the .eh_frame in its memory by the registry the agent uses
// (loaded_modules.h), and the walk
// from inside a chain of frame-pointer-less functions (walk_chain.c) must
// give the return addresses glibc's backtrace() gives for the same stack.
#include "runtime/unwind/loaded_modules.h"
#include "runtime/unwind/stack_walker.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

extern "C" {
typedef void (*chain_cb)(uint64_t rip, uint64_t rsp, uint64_t rbp, void **bt,
                         int nbt);
void chain_top(chain_cb cb, int depth);
}

namespace ubtrace::runtime::unwind {
namespace {

// The loaded modules as the agent publishes them (loaded_modules.h): each
// one's mapped .eh_frame compiled into rows.
ModuleSet modules() {
  enable_loaded_modules();
  RefreshStats stats = refresh_loaded_modules();
  EXPECT_GE(stats.with_rows, 2u); // this test and libc at least
  return loaded_modules();
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
  ModuleSet mods = modules();
  uint64_t out[128];
  WalkStats stats;
  size_t n = 0;
  g_capture.walk = [&](const UnwindRegs &regs) {
    n = walk_stack(mods.modules, mods.count, regs, out, 128, plain_read,
                   &stats);
  };
  chain_top(capture, 12);
  g_capture.walk = nullptr;
  const auto &bt = g_capture.backtrace;
  // backtrace()'s first entry is its own return address in the leaf (in
  // a sanitizer build, ASan's interceptor of backtrace() adds one more
  // before it); from the leaf's caller on, the two walks must agree.
  ASSERT_GE(bt.size(), 16u);
  ASSERT_GE(n, 16u);
  size_t skip = 1;
  while (skip < 3 && skip < bt.size() && bt[skip] != out[1])
    skip++;
  ASSERT_LT(skip, 3u) << "the leaf's caller is not among backtrace()'s "
                         "first frames";
  size_t common = std::min<size_t>(n, bt.size() - skip + 1);
  for (size_t i = 1; i < common; i++)
    EXPECT_EQ(out[i], bt[i + skip - 1])
        << "frame " << i << ": " << symbol(out[i]) << " vs "
        << symbol(bt[i + skip - 1]);
  // Every frame of the chain needed CFI (no frame pointers there).
  EXPECT_GE(stats.cfi_steps, 14u);
}

TEST(StackWalker, CorruptStacksEndTheWalk) {
  ModuleSet mods = modules();
  uint64_t out[64];
  // Unreadable memory ends the walk where it is met: with every read
  // failing, only the probed ip; with three reads allowed, at most the
  // frames those reads found.
  for (int allowed : {0, 3}) {
    int reads = 0;
    size_t n = 0;
    g_capture.walk = [&](const UnwindRegs &regs) {
      n = walk_stack(mods.modules, mods.count, regs, out, 64,
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
  size_t n = walk_stack(mods.modules, mods.count, loop, out, 64, plain_read);
  EXPECT_EQ(n, 2u);
}

// A library loaded again and again (a dlopen/dlclose loop) reuses its
// rows: refreshes build nothing new, so memory does not grow with them.
TEST(LoadedModules, RefreshesReuseRowsPerFile) {
  modules();
  const char *build = std::getenv("UBTRACE_BUILD_DIR");
  std::string lib = build ? std::string(build) + "/tests/testprogs/libubtest.so"
                          : std::string();
  size_t built_after_first = 0;
  for (int round = 0; round < 50; round++) {
    void *h = lib.empty() ? nullptr : dlopen(lib.c_str(), RTLD_NOW);
    RefreshStats st = refresh_loaded_modules();
    if (round > 0)
      built_after_first += st.rows_built;
    if (h)
      dlclose(h);
    refresh_loaded_modules();
  }
  EXPECT_EQ(built_after_first, 0u);
  ModuleSet after = loaded_modules();
  EXPECT_GE(after.count, 2u);
}

// Not a benchmark (bench/ measures): a walk of a 16-frame stack must not
// take milliseconds. Printed for the record.
TEST(StackWalker, SixteenFrameWalkCost) {
  ModuleSet mods = modules();
  uint64_t out[16];
  constexpr int kRounds = 100000;
  size_t total = 0;
  std::chrono::steady_clock::time_point t0, t1;
  g_capture.walk = [&](const UnwindRegs &regs) {
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; i++)
      total += walk_stack(mods.modules, mods.count, regs, out, 16, plain_read);
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
