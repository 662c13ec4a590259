// Unwinding through functions whose return address a return hook replaced:
// C++ exceptions, backtrace(), and pthread_exit's forced unwind.
#include "runtime/hook/hook.h"
#include "tests/unit/hook/exception_functions.h"
#include "tests/unit/hook/helpers.h"

#include <atomic>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <stdexcept>
#include <string>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounded;
using testing::call;

struct Returns {
  std::atomic<long> hits{0};
  long last = 0;
};

void on_return(PtRegs *regs, void *user) {
  auto *r = static_cast<Returns *>(user);
  r->last = static_cast<long>(static_cast<int>(regs->rax));
  r->hits.fetch_add(1);
}

TEST(HookUnwind, ExceptionThroughAHookedFrame) {
  Returns returns;
  Result<HookId> id = install_return_hook(addr(hk_middle), on_return, &returns,
                                          bounded(hk_middle));
  ASSERT_TRUE(id.ok()) << id.error();
  uint64_t unwound = hook_stats().unwound_entries;
  for (int i = 1; i <= 100; ++i) {
    try {
      call(hk_middle, i);
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error &e) {
      EXPECT_EQ(std::string(e.what()), "thrown " + std::to_string(i));
    }
    EXPECT_EQ(current_shadow_depth(), 0u); // popped by the personality
  }
  EXPECT_EQ(returns.hits.load(), 0); // no return happened
  EXPECT_EQ(hook_stats().unwound_entries - unwound, 100u);
  EXPECT_EQ(call(hk_middle, -5), 6); // normal returns still traced
  EXPECT_EQ(returns.hits.load(), 1);
  EXPECT_EQ(returns.last, 6);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookUnwind, ExceptionFromTheHookedFunctionItselfAndNestedFrames) {
  Returns r_thrower, r_middle, r_outer;
  Result<HookId> a = install_return_hook(addr(hk_thrower), on_return,
                                         &r_thrower, bounded(hk_thrower));
  Result<HookId> b = install_return_hook(addr(hk_middle), on_return, &r_middle,
                                         bounded(hk_middle));
  Result<HookId> c = install_return_hook(addr(hk_outer), on_return, &r_outer,
                                         bounded(hk_outer));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  try {
    call(hk_outer, 3);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "thrown 3");
  }
  EXPECT_EQ(current_shadow_depth(), 0u);
  EXPECT_EQ(call(hk_outer, -2), 13);
  EXPECT_EQ(r_thrower.last, 2);
  EXPECT_EQ(r_middle.last, 3);
  EXPECT_EQ(r_outer.last, 13);
  EXPECT_EQ(r_outer.hits.load(), 1);
  for (HookId id : {*a, *b, *c})
    ASSERT_TRUE(uninstall_hook(id).ok());
}

TEST(HookUnwind, CatchInsideTheHookedFunction) {
  Returns returns;
  Result<HookId> id = install_return_hook(addr(hk_catcher), on_return, &returns,
                                          bounded(hk_catcher));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(call(hk_catcher, 4), 1000);
  EXPECT_EQ(returns.last, 1000);
  EXPECT_EQ(current_shadow_depth(), 0u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookUnwind, BacktraceCrossesAHookedFrame) {
  Returns returns;
  Result<HookId> id = install_return_hook(addr(hk_bt_middle), on_return,
                                          &returns, bounded(hk_bt_middle));
  ASSERT_TRUE(id.ok()) << id.error();
  void *frames[32];
  int n = call(hk_bt_caller, frames, 32);
  // leaf, middle, (the return stub), caller: the walk must reach the
  // caller, which only the stub's unwind info makes possible.
  bool found_caller = false;
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_sname &&
        std::string(info.dli_sname) == "hk_bt_caller")
      found_caller = true;
  }
  EXPECT_TRUE(found_caller);
  EXPECT_EQ(returns.hits.load(), 1);
  EXPECT_EQ(returns.last, n);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

void *exit_through_hook(void *) {
  hk_exiting_middle(77);
  return nullptr;
}

TEST(HookUnwind, PthreadExitUnwindsThroughAHookedFrame) {
  Returns returns;
  Result<HookId> id = install_return_hook(addr(hk_exiting_middle), on_return,
                                          &returns, bounded(hk_exiting_middle));
  ASSERT_TRUE(id.ok()) << id.error();
  for (int i = 0; i < 10; ++i) {
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, nullptr, exit_through_hook, nullptr), 0);
    void *result = nullptr;
    ASSERT_EQ(pthread_join(t, &result), 0);
    EXPECT_EQ(reinterpret_cast<long>(result), 77);
  }
  EXPECT_EQ(returns.hits.load(), 0);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

} // namespace
} // namespace ubtrace::runtime::hook
