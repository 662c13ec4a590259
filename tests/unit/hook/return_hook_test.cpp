// Return hooks: return values, the kernel's uretprobe register view,
// recursion, longjmp over hooked frames, overflow of the shadow stack, and
// the trap path.
#include "runtime/hook/hook.h"
#include "runtime/hook/thread_state.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <atomic>
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <thread>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounded;
using testing::call;

struct Returns {
  std::atomic<long> hits{0};
  long last_retval = 0;
  uint64_t rip = 0, rsp = 0;
  long sum = 0;
};

void on_return(PtRegs *regs, void *user) {
  auto *r = static_cast<Returns *>(user);
  r->last_retval = static_cast<long>(regs->rax);
  r->rip = regs->rip;
  r->rsp = regs->rsp;
  r->sum += static_cast<long>(regs->rax);
  r->hits.fetch_add(1);
}

struct Entries {
  std::atomic<long> hits{0};
  uint64_t rsp = 0;
};

void on_entry(PtRegs *regs, void *user) {
  auto *e = static_cast<Entries *>(user);
  e->rsp = regs->rsp;
  e->hits.fetch_add(1);
}

TEST(HookReturn, SeesTheReturnValueLikeAUretprobe) {
  uint64_t fn = addr(hk_counted);
  Entries entries;
  Returns returns;
  Result<HookId> in =
      install_entry_hook(fn, on_entry, &entries, bounded(hk_counted));
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(fn, on_return, &returns, bounded(hk_counted));
  ASSERT_TRUE(out.ok()) << out.error();

  EXPECT_EQ(hk_invoke(hk_counted, 7), 22);
  EXPECT_EQ(returns.last_retval, 22);
  // rip: where the function returns to; rsp: after the return.
  EXPECT_EQ(returns.rip, addr(hk_invoke_ret));
  EXPECT_EQ(returns.rsp, entries.rsp + 8);
  EXPECT_EQ(current_shadow_depth(), 0u);

  for (long x = 0; x < 100; ++x)
    EXPECT_EQ(call(hk_counted, x), x * 3 + 1);
  EXPECT_EQ(returns.hits.load(), 101);
  EXPECT_EQ(entries.hits.load(), 101);
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

TEST(HookReturn, OnAJumpSiteWithARelocatedCall) {
  Returns returns;
  Result<HookId> id = install_return_hook(addr(hk_push_call), on_return,
                                          &returns, bounded(hk_push_call));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(call(hk_push_call, 9L), 10);
  EXPECT_EQ(returns.last_retval, 10);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookReturn, StackArgumentsStayWhereTheFunctionReadsThem) {
  Entries entries;
  Returns returns;
  Result<HookId> in =
      install_entry_hook(addr(hk_eight), on_entry, &entries, bounded(hk_eight));
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(addr(hk_eight), on_return, &returns, bounded(hk_eight));
  ASSERT_TRUE(out.ok()) << out.error();
  long (*volatile fn)(long, long, long, long, long, long, long, long) = hk_eight;
  for (long x = 1; x <= 50; ++x) {
    long want = x * (1 + 2 + 3 + 4 + 5 + 6 + 7) + 8 * (x + 100);
    EXPECT_EQ(fn(x, x, x, x, x, x, x, x + 100), want);
    EXPECT_EQ(returns.last_retval, want);
    EXPECT_EQ(returns.rsp, entries.rsp + 8);
  }
  EXPECT_EQ(returns.hits.load(), 50);
  EXPECT_EQ(current_shadow_depth(), 0u);
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

// The lean return entry reads the thread's state as fs:[offset]: the
// offsets must name each thread's own variables.
TEST(HookReturn, ThreadStateOffsetsHoldOnEveryThread) {
  auto check = [] {
    uint64_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    EXPECT_EQ(tp + thread_state_tls_offset(),
              reinterpret_cast<uint64_t>(&t_thread_state));
    EXPECT_EQ(tp + thread_excluded_tls_offset(),
              reinterpret_cast<uint64_t>(&t_thread_excluded));
  };
  check();
  std::thread other(check);
  other.join();
}

// setjmp returns twice: 0, then the longjmp's value through the same return
// address (the return stub). With returns_twice the entry stays (pinned) for
// as long as the caller's frame may longjmp back; the same call in a loop
// reuses it.
// Returns of setjmp called from one frame (the thread's own start also
// calls it).
struct FrameReturns {
  uint64_t frame = 0; // an address in the frame that calls setjmp
  std::atomic<long> hits{0};
  long last_retval = 0;
};

void on_frame_return(PtRegs *regs, void *user) {
  auto *r = static_cast<FrameReturns *>(user);
  if (regs->rsp > r->frame + 4096 || regs->rsp + 4096 < r->frame)
    return;
  r->last_retval = static_cast<long>(regs->rax);
  r->hits.fetch_add(1);
}

TEST(HookReturn, AFunctionThatReturnsTwice) {
  auto *fn = reinterpret_cast<int (*)(struct __jmp_buf_tag *)>(
      dlsym(RTLD_DEFAULT, "_setjmp"));
  ASSERT_NE(fn, nullptr);
  HookOptions options = bounded(fn);
  options.returns_twice = true;
  FrameReturns returns;
  Result<HookId> id =
      install_return_hook(addr(fn), on_frame_return, &returns, options);
  ASSERT_TRUE(id.ok()) << id.error();
  // On a thread of its own: the pinned entry outlives the loop (its frame
  // does), which the other tests of this thread would see.
  std::thread([&] {
    uint32_t depth = current_shadow_depth(); // the thread's start: pinned
    jmp_buf env;
    returns.frame = reinterpret_cast<uint64_t>(&env);
    for (int round = 0; round < 3; ++round) {
      volatile int returned = 0;
      int r = setjmp(env); // glibc: _setjmp
      returned = returned + 1;
      if (r == 0)
        longjmp(env, 7);
      EXPECT_EQ(r, 7);
      EXPECT_EQ(returned, 2);
    }
    // One entry for the three rounds: the same call, reused.
    EXPECT_EQ(current_shadow_depth(), depth + 1);
  }).join();
  EXPECT_EQ(returns.hits.load(), 6);
  EXPECT_EQ(returns.last_retval, 7);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookReturn, Recursion) {
  uint64_t fn = addr(hk_fib);
  Entries entries;
  Returns returns;
  Result<HookId> in =
      install_entry_hook(fn, on_entry, &entries, bounded(hk_fib));
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(fn, on_return, &returns, bounded(hk_fib));
  ASSERT_TRUE(out.ok()) << out.error();
  hk_fib_calls = 0;
  EXPECT_EQ(call(hk_fib, 20L), 6765);
  EXPECT_EQ(entries.hits.load(), hk_fib_calls);
  EXPECT_EQ(returns.hits.load(), hk_fib_calls);
  EXPECT_EQ(returns.last_retval, 6765); // the outermost returns last
  EXPECT_EQ(current_shadow_depth(), 0u);
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
  EXPECT_EQ(call(hk_fib, 10L), 55);
}

TEST(HookReturn, DeeperThanTheShadowStack) {
  // 100 nested frames: the innermost 36 are not traced; results stay right.
  uint64_t before = hook_stats().shadow_overflows;
  Returns returns;
  Result<HookId> id = install_return_hook(addr(hk_depth), on_return, &returns,
                                          bounded(hk_depth));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(call(hk_depth, 100L), 100);
  EXPECT_EQ(returns.hits.load(), 64);
  EXPECT_EQ(hook_stats().shadow_overflows - before, 101u - 64u);
  EXPECT_EQ(current_shadow_depth(), 0u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookReturn, LongjmpOverHookedFrames) {
  Returns returns;
  Result<HookId> id = install_return_hook(addr(hk_jumper), on_return, &returns,
                                          bounded(hk_jumper));
  ASSERT_TRUE(id.ok()) << id.error();
  uint64_t overflows = hook_stats().shadow_overflows;
  volatile long normal = 0;
  for (int i = 0; i < 300; ++i) {
    jmp_buf env;
    if (setjmp(env) == 0) {
      call(hk_jumper, &env, -1L); // longjmps out: no return
      ADD_FAILURE() << "returned from a longjmp";
    }
    // The hooked frame was skipped; hooks keep working.
    if (i % 10 == 0) {
      EXPECT_EQ(call(hk_jumper, &env, long{i}), 2L * i);
      normal = normal + 1;
      EXPECT_EQ(returns.last_retval, 2L * i);
    }
    EXPECT_LE(current_shadow_depth(), 64u);
  }
  EXPECT_EQ(returns.hits.load(), normal);
  // Stale entries were dropped when the stack filled, not counted as lost.
  EXPECT_EQ(hook_stats().shadow_overflows, overflows);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookReturn, OnTheTrapPath) {
  uint64_t fn = addr(hk_tiny3);
  Returns returns;
  Entries entries;
  Result<HookId> in =
      install_entry_hook(fn, on_entry, &entries, bounded(hk_tiny3));
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(fn, on_return, &returns, bounded(hk_tiny3));
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_EQ(*hooked_mode(fn), PatchMode::Trap);
  EXPECT_EQ(hk_invoke(hk_tiny3, 77), 77);
  EXPECT_EQ(returns.last_retval, 77);
  EXPECT_EQ(returns.rip, addr(hk_invoke_ret));
  EXPECT_EQ(returns.rsp, entries.rsp + 8);
  for (long x = 0; x < 50; ++x)
    EXPECT_EQ(call(hk_tiny3, x), x);
  EXPECT_EQ(returns.hits.load(), 51);
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

// A return handler that reads the entry arguments: every return's own
// (per frame, through recursion), on the full, trap and formerly lean paths.
struct ArgChecks {
  std::atomic<long> hits{0}, wrong{0}, missing{0};
  long (*expect)(long arg0, long retval) = nullptr;
  long sixth = -1;
};

void on_return_with_args(PtRegs *regs, void *user) {
  auto *c = static_cast<ArgChecks *>(user);
  c->hits.fetch_add(1);
  const uint64_t *args = return_entry_args();
  if (!args) {
    c->missing.fetch_add(1);
    return;
  }
  if (c->expect(static_cast<long>(args[0]), static_cast<long>(regs->rax)) !=
      0)
    c->wrong.fetch_add(1);
  c->sixth = static_cast<long>(args[5]);
}

long fib_of(long n) {
  long a = 0, b = 1;
  for (long i = 0; i < n; ++i) {
    long t = a + b;
    a = b;
    b = t;
  }
  return a;
}

TEST(HookReturn, EntryArgumentsOfEachFrameThroughRecursion) {
  ArgChecks checks;
  checks.expect = [](long n, long r) { return long(fib_of(n) != r); };
  HookOptions o = bounded(hk_fib);
  o.entry_args = true;
  Result<HookId> out =
      install_return_hook(addr(hk_fib), on_return_with_args, &checks, o);
  ASSERT_TRUE(out.ok()) << out.error();
  hk_fib_calls = 0;
  EXPECT_EQ(call(hk_fib, 15L), 610);
  EXPECT_EQ(checks.hits.load(), hk_fib_calls);
  EXPECT_EQ(checks.missing.load(), 0);
  EXPECT_EQ(checks.wrong.load(), 0);
  EXPECT_EQ(return_entry_args(), nullptr); // outside a return handler
  ASSERT_TRUE(uninstall_hook(*out).ok());
}

TEST(HookReturn, EntryArgumentsKeptFromWhenTheyAreAsked) {
  // A return hook alone takes the lean entry; asking for the arguments
  // later sends the site's entries through the full path.
  ArgChecks checks;
  checks.expect = [](long x, long r) { return long(x * 3 + 1 != r); };
  Result<HookId> out = install_return_hook(
      addr(hk_counted), on_return_with_args, &checks, bounded(hk_counted));
  ASSERT_TRUE(out.ok()) << out.error();
  for (long x = 0; x < 20; ++x)
    EXPECT_EQ(call(hk_counted, x), x * 3 + 1);
  EXPECT_EQ(checks.missing.load(), 20);
  ASSERT_TRUE(keep_entry_args(addr(hk_counted)).ok());
  for (long x = 0; x < 20; ++x)
    EXPECT_EQ(call(hk_counted, x), x * 3 + 1);
  EXPECT_EQ(checks.hits.load(), 40);
  EXPECT_EQ(checks.missing.load(), 20);
  EXPECT_EQ(checks.wrong.load(), 0);
  ASSERT_TRUE(uninstall_hook(*out).ok());
  EXPECT_FALSE(keep_entry_args(addr(hk_counted)).ok());
}

TEST(HookReturn, EntryArgumentsOnTheTrapPathAndAllSixRegisters) {
  ArgChecks tiny;
  tiny.expect = [](long x, long r) { return long(x != r); };
  HookOptions o = bounded(hk_tiny3);
  o.entry_args = true;
  Result<HookId> out =
      install_return_hook(addr(hk_tiny3), on_return_with_args, &tiny, o);
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_EQ(*hooked_mode(addr(hk_tiny3)), PatchMode::Trap);
  for (long x = 0; x < 30; ++x)
    EXPECT_EQ(call(hk_tiny3, x), x);
  EXPECT_EQ(tiny.hits.load(), 30);
  EXPECT_EQ(tiny.missing.load(), 0);
  EXPECT_EQ(tiny.wrong.load(), 0);
  ASSERT_TRUE(uninstall_hook(*out).ok());

  ArgChecks eight;
  eight.expect = [](long a, long r) {
    // a..e and g = a, f = 1000a, h = a + 100.
    return long(r != a * 22 + 6 * 1000 * a + 8 * (a + 100));
  };
  o = bounded(hk_eight);
  o.entry_args = true;
  out = install_return_hook(addr(hk_eight), on_return_with_args, &eight, o);
  ASSERT_TRUE(out.ok()) << out.error();
  long (*volatile fn)(long, long, long, long, long, long, long, long) = hk_eight;
  for (long x = 1; x <= 10; ++x)
    fn(x, x, x, x, x, x * 1000, x, x + 100);
  EXPECT_EQ(eight.hits.load(), 10);
  EXPECT_EQ(eight.missing.load(), 0);
  EXPECT_EQ(eight.wrong.load(), 0);
  EXPECT_EQ(eight.sixth, 10000); // r9 of the last call
  ASSERT_TRUE(uninstall_hook(*out).ok());
}

TEST(HookReturn, RefusesAnAddressThatIsNotTheFunctionEntry) {
  HookOptions o = bounded(hk_frame);
  Result<HookId> id =
      install_return_hook(addr(hk_frame) + 1, on_return, nullptr, o);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.error().find("not the entry of its function"),
            std::string::npos);
}

} // namespace
} // namespace ubtrace::runtime::hook
