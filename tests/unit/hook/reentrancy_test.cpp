// Handlers that run hooked code (directly or from a signal handler) are
// not traced again; hooks keep working in a forked child.
#include "runtime/hook/hook.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <atomic>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounded;
using testing::call;

std::atomic<long> g_hits{0};
std::atomic<long> g_inner_result{0};

void calls_itself(PtRegs *regs, void *) {
  g_hits.fetch_add(1);
  // The probed function again, from inside its own handler.
  g_inner_result = call(hk_counted, static_cast<long>(regs->rdi) + 1);
}

TEST(HookReentrancy, HandlerCallingTheHookedFunctionIsNotTracedAgain) {
  uint64_t skips = hook_stats().nested_skips;
  g_hits = 0;
  Result<HookId> id = install_entry_hook(addr(hk_counted), calls_itself,
                                         nullptr, bounded(hk_counted));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(call(hk_counted, 10L), 31);
  EXPECT_EQ(g_inner_result.load(), 34);
  EXPECT_EQ(g_hits.load(), 1);
  EXPECT_EQ(hook_stats().nested_skips - skips, 1u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

void on_usr1(int) {
  g_inner_result = call(hk_counted, 100L);
}

void raises_signal(PtRegs *, void *) {
  g_hits.fetch_add(1);
  raise(SIGUSR1); // delivered now, inside the handler
}

TEST(HookReentrancy, SignalHandlerRunningHookedCodeDuringAHandler) {
  struct sigaction sa = {}, old = {};
  sa.sa_handler = on_usr1;
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  g_hits = 0;
  uint64_t skips = hook_stats().nested_skips;
  Result<HookId> id = install_entry_hook(addr(hk_counted), raises_signal,
                                         nullptr, bounded(hk_counted));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(call(hk_counted, 1L), 4);
  EXPECT_EQ(g_inner_result.load(), 301);
  EXPECT_EQ(g_hits.load(), 1);
  EXPECT_EQ(hook_stats().nested_skips - skips, 1u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
  sigaction(SIGUSR1, &old, nullptr);
}

void count_hit(PtRegs *, void *) {
  g_hits.fetch_add(1);
}

TEST(HookReentrancy, HooksWorkInAForkedChild) {
  g_hits = 0;
  Result<HookId> in =
      install_entry_hook(addr(hk_fib), count_hit, nullptr, bounded(hk_fib));
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(addr(hk_fib), count_hit, nullptr, bounded(hk_fib));
  ASSERT_TRUE(out.ok()) << out.error();
  pid_t pid = fork();
  if (pid == 0) {
    // In the child: hooks fire, and hooks can be removed and added again
    // (membarrier registration does not survive fork).
    g_hits = 0;
    hk_fib_calls = 0;
    bool ok = call(hk_fib, 12L) == 144 && g_hits == 2 * hk_fib_calls;
    ok = ok && uninstall_hook(*out).ok() && uninstall_hook(*in).ok();
    ok = ok && call(hk_fib, 5L) == 5;
    Result<HookId> again =
        install_entry_hook(addr(hk_fib), count_hit, nullptr, bounded(hk_fib));
    ok = ok && again.ok();
    long before = g_hits;
    ok = ok && call(hk_fib, 3L) == 2 && g_hits - before == 5;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(g_hits.load(), 0); // the child's hits stayed in the child
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

} // namespace
} // namespace ubtrace::runtime::hook
