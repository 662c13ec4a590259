// Threads that block every signal while hooks go in and out of the
// functions they call (hook.h, trap_safety.h): a patch within one aligned
// 16-byte block goes in atomically (no transient int3 for them to die on),
// sites that need an int3 are refused while a thread blocks SIGTRAP, and a
// non-atomic patch is left in place, unbound, rather than taken out with an
// int3.
#include "runtime/hook/hook.h"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <gtest/gtest.h>
#include <pthread.h>
#include <thread>
#include <vector>

extern "C" {
// 16-byte aligned, a 5-byte first instruction: the patch is one aligned
// block and covers no other instruction start.
long bt_atomic_site(long x);
// The same at offset 12 of a block: the patch straddles two blocks.
long bt_straddle_site(long x);
// Three bytes: an int3 site.
long bt_tiny_site(long x);
}
__asm__(R"(
  .text
  .p2align 4
  .globl bt_atomic_site
  .type bt_atomic_site, @function
bt_atomic_site:
  movl $1, %eax
  addq %rdi, %rax
  ret
  .size bt_atomic_site, .-bt_atomic_site
  .p2align 4
  .skip 12, 0xcc
  .globl bt_straddle_site
  .type bt_straddle_site, @function
bt_straddle_site:
  movl $2, %eax
  addq %rdi, %rax
  ret
  .size bt_straddle_site, .-bt_straddle_site
  .p2align 4
  .globl bt_tiny_site
  .type bt_tiny_site, @function
bt_tiny_site:
  movq %rdi, %rax
  ret
  .size bt_tiny_site, .-bt_tiny_site
)");

namespace ubtrace::runtime::hook {
namespace {

uint64_t addr(long (*fn)(long)) { return reinterpret_cast<uint64_t>(fn); }

std::atomic<long> g_hits{0};
void count_hit(PtRegs *, void *) { g_hits.fetch_add(1, std::memory_order_relaxed); }

void block_everything() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
}

// Threads that block every signal and call fn until stopped, checking
// every result.
struct BlockedCallers {
  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};
  std::atomic<long> wrong{0}, calls{0};
  std::vector<std::thread> threads;

  BlockedCallers(long (*fn)(long), long offset, int count) {
    for (int t = 0; t < count; ++t)
      threads.emplace_back([this, fn, offset] {
        block_everything();
        ready.fetch_add(1);
        long (*volatile call)(long) = fn;
        for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
          if (call(i) != i + offset)
            wrong.fetch_add(1);
          calls.fetch_add(1, std::memory_order_relaxed);
        }
      });
    while (ready.load() < count)
      std::this_thread::yield();
  }
  ~BlockedCallers() { finish(); }
  void finish() {
    stop = true;
    for (auto &t : threads)
      if (t.joinable())
        t.join();
  }
};

TEST(BlockingThreads, AtomicJumpPatchesInAndOutWhileTheyCall) {
  ASSERT_TRUE(prepare_hooks().ok());
  BlockedCallers callers(bt_atomic_site, 1, 4);
  HookStats before = hook_stats();
  long hits = g_hits.load();
  for (int cycle = 0; cycle < 500; ++cycle) {
    Result<HookId> id = install_entry_hook(addr(bt_atomic_site), count_hit, nullptr);
    ASSERT_TRUE(id.ok()) << id.error();
    ASSERT_EQ(*hooked_mode(addr(bt_atomic_site)), PatchMode::Jump);
    long seen = callers.calls.load();
    while (callers.calls.load() < seen + 8) // let them run through it
      std::this_thread::yield();
    ASSERT_TRUE(uninstall_hook(*id).ok());
  }
  callers.finish();
  EXPECT_EQ(callers.wrong.load(), 0);
  EXPECT_GT(g_hits.load(), hits);
  // Every patch went in and out in one store: no transient int3 that a
  // blocked SIGTRAP could kill them on (and none was taken).
  HookStats after = hook_stats();
  EXPECT_EQ(after.atomic_patches - before.atomic_patches, 1000u);
  EXPECT_EQ(after.int3_patches, before.int3_patches);
  EXPECT_EQ(after.patching_traps, before.patching_traps);
}

TEST(BlockingThreads, AnInt3SiteIsRefusedWhileAThreadBlocksSigtrap) {
  ASSERT_TRUE(prepare_hooks().ok());
  {
    BlockedCallers blocker(bt_atomic_site, 1, 1);
    Result<HookId> id = install_entry_hook(addr(bt_tiny_site), count_hit, nullptr);
    ASSERT_FALSE(id.ok());
    EXPECT_NE(id.error().find("safely: thread "), std::string::npos) << id.error();
    EXPECT_NE(id.error().find("blocks SIGTRAP"), std::string::npos) << id.error();
    EXPECT_NE(id.error().find("int3"), std::string::npos) << id.error();
  }
  // No blocker left: the int3 site goes in and counts.
  long hits = g_hits.load();
  Result<HookId> id = install_entry_hook(addr(bt_tiny_site), count_hit, nullptr);
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(*hooked_mode(addr(bt_tiny_site)), PatchMode::Trap);
  long (*volatile call)(long) = bt_tiny_site;
  for (long i = 0; i < 100; ++i)
    EXPECT_EQ(call(i), i);
  EXPECT_EQ(g_hits.load() - hits, 100);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(BlockingThreads, ANonAtomicPatchStaysInUnboundRatherThanTakeAnInt3) {
  ASSERT_TRUE(prepare_hooks().ok());
  Result<HookId> id = install_entry_hook(addr(bt_straddle_site), count_hit, nullptr);
  ASSERT_TRUE(id.ok()) << id.error();
  ASSERT_EQ(*hooked_mode(addr(bt_straddle_site)), PatchMode::Jump);
  {
    BlockedCallers callers(bt_straddle_site, 2, 2);
    // An int3 site is refused meanwhile.
    Result<HookId> tiny =
        install_return_hook(addr(bt_tiny_site), count_hit, nullptr);
    EXPECT_FALSE(tiny.ok());
    uint64_t left_in = hook_stats().patches_left_in;
    ASSERT_TRUE(uninstall_hook(*id).ok());
    EXPECT_EQ(hook_stats().patches_left_in - left_in, 1u);
    // Still patched (a jump), but nothing runs any more.
    EXPECT_EQ(*reinterpret_cast<volatile uint8_t *>(addr(bt_straddle_site)),
              0xE9);
    long hits = g_hits.load();
    long seen = callers.calls.load();
    while (callers.calls.load() < seen + 1000)
      std::this_thread::yield();
    EXPECT_EQ(g_hits.load(), hits);
    callers.finish();
    EXPECT_EQ(callers.wrong.load(), 0);
  }
  // Bound again later, through the patch that stayed.
  long hits = g_hits.load();
  id = install_entry_hook(addr(bt_straddle_site), count_hit, nullptr);
  ASSERT_TRUE(id.ok()) << id.error();
  long (*volatile call)(long) = bt_straddle_site;
  EXPECT_EQ(call(5), 7);
  EXPECT_EQ(g_hits.load() - hits, 1);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

} // namespace
} // namespace ubtrace::runtime::hook
