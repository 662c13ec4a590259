// Threads that exit while hooks are bound on the functions the agent's own
// teardown would call: the thread-state teardown must run no hooked code.
#include "runtime/hook/hook.h"

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace ubtrace::runtime::hook {
namespace {

std::atomic<long> g_returns{0};

void count_return(PtRegs *, void *) {
  g_returns.fetch_add(1, std::memory_order_relaxed);
}

// The implementation this process's memset calls run (dlsym resolves the
// IFUNC, as the PLT does).
uint64_t resolved(const char *name) {
  return reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, name));
}

void *(*volatile g_memset)(void *, int, size_t) = memset;

// Every thread hits the hook (so it has hook state) and then exits.
void run_exiting_threads(int count) {
  for (int round = 0; round < count; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([] {
        char buf[512];
        g_memset(buf, 0x5a, sizeof buf);
        asm volatile("" ::"r"(buf) : "memory");
      });
    for (auto &t : threads)
      t.join();
  }
}

TEST(ThreadExit, ReturnHookOnMemsetSurvivesThreadExits) {
  uint64_t memset_impl = resolved("memset");
  ASSERT_NE(memset_impl, 0u);
  Result<HookId> id = install_return_hook(memset_impl, count_return, nullptr);
  ASSERT_TRUE(id.ok()) << id.error();
  long before = g_returns.load();
  run_exiting_threads(25);
  EXPECT_GE(g_returns.load() - before, 100);
  EXPECT_EQ(current_shadow_depth(), 0u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

} // namespace
} // namespace ubtrace::runtime::hook
