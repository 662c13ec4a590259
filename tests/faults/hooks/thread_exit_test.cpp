// Threads that exit while hooks are bound on the functions the agent's own
// teardown would call: the thread-state teardown must run no hooked code.
#include "runtime/hook/hook.h"
#include "runtime/hook/thread_state.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
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

// A function the program's own thread-exit code calls: a destructor of a
// key created after the agent's, so it runs after the agent released the
// thread's hook state.
__attribute__((noinline)) long exit_work(long x) {
  __asm__ volatile("" ::: "memory");
  return x + 1;
}
long (*volatile g_exit_work)(long) = exit_work;

void late_destructor(void *value) {
  g_exit_work(reinterpret_cast<long>(value));
}

TEST(ThreadExit, HitsAfterTheStateWasReleasedRecycleTheirStates) {
  ASSERT_TRUE(prepare_hooks().ok()); // the agent's key comes first
  pthread_key_t late;
  ASSERT_EQ(pthread_key_create(&late, late_destructor), 0);
  Result<HookId> in = install_entry_hook(reinterpret_cast<uint64_t>(exit_work),
                                         count_return, nullptr);
  Result<HookId> out = install_return_hook(
      reinterpret_cast<uint64_t>(exit_work), count_return, nullptr);
  ASSERT_TRUE(in.ok() && out.ok());
  long before = g_returns.load();
  HookStats start = hook_stats();
  constexpr int kThreads = 600;
  for (int i = 0; i < kThreads; ++i)
    std::thread([&] {
      g_exit_work(1); // a state before the exit
      pthread_setspecific(late, reinterpret_cast<void *>(1));
    }).join();
  HookStats end = hook_stats();
  // Every hit counted: two per thread before the exit, two in it.
  EXPECT_EQ(g_returns.load() - before, 4 * kThreads);
  // The states went back to the pool: the threads ran one after another, so
  // a handful of them were ever in use, none kept, none refused.
  EXPECT_LT(end.threads_seen, 32u);
  EXPECT_EQ(end.kept_at_exit, start.kept_at_exit);
  EXPECT_EQ(end.refused_claims, start.refused_claims);
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
  pthread_key_delete(late);
}

// After the key destructors, glibc's thread exit frees the thread's malloc
// cache: a hook on free fires there, past the point where a state claimed
// with pthread_setspecific would ever be released.
TEST(ThreadExit, HitsAfterTheDestructorsDoNotLeakStates) {
  ASSERT_TRUE(prepare_hooks().ok());
  Result<HookId> id = install_entry_hook(resolved("free"), count_return, nullptr);
  ASSERT_TRUE(id.ok()) << id.error();
  HookStats start = hook_stats();
  for (int i = 0; i < 600; ++i)
    std::thread([] {
      void *volatile p = malloc(64); // fills this thread's tcache on free
      free(p);
    }).join();
  HookStats end = hook_stats();
  EXPECT_LT(end.threads_seen, 32u);
  EXPECT_EQ(end.refused_claims, start.refused_claims);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

// A thread that ends with a raw exit system call from inside a
// return-hooked function: no destructor runs, its state would stay taken.
// More of them than the pool holds: claims reap the states of threads that
// are gone.
__attribute__((noinline)) long raw_exit_from_here(long) {
  syscall(SYS_exit, 0);
  __builtin_unreachable();
}
long (*volatile g_raw_exit)(long) = raw_exit_from_here;

void *exit_without_destructors(void *) {
  g_raw_exit(0);
  return nullptr;
}

TEST(ThreadExit, StatesOfThreadsGoneWithoutDestructorsAreReaped) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  // ASan keeps a record per thread that only its own exit path clears: the
  // next thread that reuses the slot stops the process.
  GTEST_SKIP() << "threads that leave by a raw exit system call cannot "
                  "run under AddressSanitizer";
#endif
#endif
  ASSERT_TRUE(prepare_hooks().ok());
  Result<HookId> id = install_return_hook(
      reinterpret_cast<uint64_t>(raw_exit_from_here), count_return, nullptr);
  ASSERT_TRUE(id.ok()) << id.error();
  HookStats start = hook_stats();
  const int threads = static_cast<int>(kMaxThreads) + 500;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, &attr, exit_without_destructors, nullptr), 0);
    pthread_join(t, nullptr); // the kernel clears the thread id: join returns
  }
  pthread_attr_destroy(&attr);
  HookStats end = hook_stats();
  EXPECT_EQ(end.refused_claims, start.refused_claims);
  EXPECT_GE(end.reaped - start.reaped, 500u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

} // namespace
} // namespace ubtrace::runtime::hook
