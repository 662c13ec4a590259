// Eight threads call hooked functions in a tight loop while another thread
// attaches and detaches thousands of times. The functions must always
// compute the right result, handlers must always see consistent arguments,
// and counts must add up.
#include "runtime/hook/hook.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <atomic>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounded;
using testing::bytes_at;

constexpr int kThreads = 8;
constexpr int kCycles = 3000;

struct Tally {
  std::atomic<long> hits{0};
  std::atomic<long> bad{0};
};

// hk_frame is called with (a, a+1, ..., a+5).
void check_frame_args(PtRegs *regs, void *user) {
  auto *t = static_cast<Tally *>(user);
  uint64_t a = regs->rdi;
  if (regs->rsi != a + 1 || regs->rdx != a + 2 || regs->rcx != a + 3 ||
      regs->r8 != a + 4 || regs->r9 != a + 5)
    t->bad.fetch_add(1, std::memory_order_relaxed);
  t->hits.fetch_add(1, std::memory_order_relaxed);
}

// hk_counted returns 3x + 1.
void check_counted_return(PtRegs *regs, void *user) {
  auto *t = static_cast<Tally *>(user);
  if ((regs->rax - 1) % 3 != 0)
    t->bad.fetch_add(1, std::memory_order_relaxed);
  t->hits.fetch_add(1, std::memory_order_relaxed);
}

struct Callers {
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0};
  std::atomic<long> wrong{0};
  std::vector<std::thread> threads;

  template <class Body> void start(Body body) {
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([this, t, body] {
        long local = 0;
        for (long i = 0; !stop.load(std::memory_order_relaxed); ++i, ++local) {
          if (!body(t * 100000000L + i))
            wrong.fetch_add(1);
          // Eight spinning threads on a small machine would otherwise
          // starve the attaching thread for whole time slices.
          if ((i & 0xFFF) == 0)
            std::this_thread::yield();
        }
        calls.fetch_add(local);
      });
  }
  void finish() {
    stop = true;
    for (std::thread &t : threads)
      t.join();
  }
};

bool call_frame(long a) {
  long (*volatile f)(long, long, long, long, long, long) = hk_frame;
  return f(a, a + 1, a + 2, a + 3, a + 4, a + 5) == 6 * a + 15;
}

bool call_counted(long x) {
  long (*volatile f)(long) = hk_counted;
  return f(x) == 3 * x + 1;
}

TEST(HookStress, EntryHookToggledUnderLoad) {
  uint64_t fn = addr(hk_frame);
  std::vector<uint8_t> original = bytes_at(fn, 16);
  Tally tally;
  Callers callers;
  callers.start(call_frame);
  for (int c = 0; c < kCycles; ++c) {
    Result<HookId> id =
        install_entry_hook(fn, check_frame_args, &tally, bounded(hk_frame));
    ASSERT_TRUE(id.ok()) << id.error();
    if (c % 4 == 0)
      std::this_thread::yield();
    ASSERT_TRUE(uninstall_hook(*id).ok());
  }
  callers.finish();
  EXPECT_EQ(callers.wrong.load(), 0);
  EXPECT_EQ(tally.bad.load(), 0);
  EXPECT_GT(tally.hits.load(), 0);
  EXPECT_LE(tally.hits.load(), callers.calls.load());
  EXPECT_EQ(bytes_at(fn, 16), original);
  HookStats stats = hook_stats();
  printf("[ stress ] %d attach/detach cycles, %ld calls, %ld handler hits, "
         "%llu patching traps, %llu boundary traps, %llu retried\n",
         kCycles, callers.calls.load(), tally.hits.load(),
         static_cast<unsigned long long>(stats.patching_traps),
         static_cast<unsigned long long>(stats.boundary_traps),
         static_cast<unsigned long long>(stats.retried_traps));
}

TEST(HookStress, ExactCountWhileAttached) {
  uint64_t fn = addr(hk_frame);
  Tally tally;
  Result<HookId> id =
      install_entry_hook(fn, check_frame_args, &tally, bounded(hk_frame));
  ASSERT_TRUE(id.ok()) << id.error();
  constexpr long kPerThread = 200000;
  std::atomic<long> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (long i = 0; i < kPerThread; ++i)
        if (!call_frame(t * 100000000L + i))
          wrong.fetch_add(1);
    });
  for (std::thread &t : threads)
    t.join();
  ASSERT_TRUE(uninstall_hook(*id).ok());
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(tally.bad.load(), 0);
  EXPECT_EQ(tally.hits.load(), kThreads * kPerThread);
}

TEST(HookStress, ReturnHookToggledUnderLoad) {
  // Returns through the stubs keep happening after their hook is gone.
  uint64_t fn = addr(hk_counted);
  std::vector<uint8_t> original = bytes_at(fn, 16);
  Tally tally;
  Callers callers;
  callers.start(call_counted);
  for (int c = 0; c < kCycles / 2; ++c) {
    Result<HookId> id = install_return_hook(fn, check_counted_return, &tally,
                                            bounded(hk_counted));
    ASSERT_TRUE(id.ok()) << id.error();
    std::this_thread::yield();
    ASSERT_TRUE(uninstall_hook(*id).ok());
  }
  callers.finish();
  EXPECT_EQ(callers.wrong.load(), 0);
  EXPECT_EQ(tally.bad.load(), 0);
  EXPECT_GT(tally.hits.load(), 0);
  EXPECT_EQ(bytes_at(fn, 16), original);
}

} // namespace
} // namespace ubtrace::runtime::hook
