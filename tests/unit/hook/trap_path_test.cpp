// The int3 path: functions too short for a jump, and a loop whose head sits
// inside the first 5 bytes.
#include "runtime/hook/hook.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <atomic>
#include <gtest/gtest.h>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounded;
using testing::bytes_at;
using testing::call;

struct Seen {
  std::atomic<long> hits{0};
  uint64_t rdi = 0, rip = 0;
};

void record(PtRegs *regs, void *user) {
  auto *s = static_cast<Seen *>(user);
  s->rdi = regs->rdi;
  s->rip = regs->rip;
  s->hits.fetch_add(1);
}

TEST(HookTrapPath, TinyFunctions) {
  struct Tiny {
    uint64_t fn;
    HookOptions options;
    long (*run)(long);
  };
  Tiny cases[] = {
      {addr(hk_tiny1), bounded(hk_tiny1),
       [](long x) {
         call(hk_tiny1);
         return x;
       }},
      {addr(hk_tiny2), bounded(hk_tiny2),
       [](long x) { return call(hk_tiny2, x); }},
      {addr(hk_tiny3), bounded(hk_tiny3),
       [](long x) { return call(hk_tiny3, x); }},
  };
  for (const Tiny &t : cases) {
    std::vector<uint8_t> before = bytes_at(t.fn, 4);
    Seen seen;
    Result<HookId> id = install_entry_hook(t.fn, record, &seen, t.options);
    ASSERT_TRUE(id.ok()) << id.error();
    EXPECT_EQ(*hooked_mode(t.fn), PatchMode::Trap);
    EXPECT_EQ(bytes_at(t.fn, 1)[0], 0xCC);
    for (long x = 1; x <= 20; ++x)
      EXPECT_EQ(t.run(x), x);
    EXPECT_EQ(seen.hits.load(), 20);
    EXPECT_EQ(seen.rip, t.fn);
    if (t.fn != addr(hk_tiny1))
      EXPECT_EQ(seen.rdi, 20u);
    ASSERT_TRUE(uninstall_hook(*id).ok());
    EXPECT_EQ(bytes_at(t.fn, 4), before);
  }
}

TEST(HookTrapPath, BranchIntoThePatchFallsBackToTheTrap) {
  uint64_t fn = addr(hk_loop_head);
  Seen seen;
  Result<HookId> id =
      install_entry_hook(fn, record, &seen, bounded(hk_loop_head));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(*hooked_mode(fn), PatchMode::Trap);
  for (long n = 1; n <= 50; ++n)
    EXPECT_EQ(call(hk_loop_head, n), n);
  EXPECT_EQ(seen.hits.load(), 50); // once per call, not per iteration
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookTrapPath, RefusedWhenTheCallerForbidsIt) {
  HookOptions o = bounded(hk_tiny2);
  o.allow_trap = false;
  Result<HookId> id = install_entry_hook(addr(hk_tiny2), record, nullptr, o);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.error().find("cannot patch a jump at"), std::string::npos);
  EXPECT_NE(id.error().find("too short for a 5-byte jump"), std::string::npos)
      << id.error();
}

TEST(HookTrapPath, NeverHookable) {
  Result<HookId> a = install_entry_hook(addr(hk_starts_int3), record, nullptr,
                                        bounded(hk_starts_int3));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().find("holds an int3"), std::string::npos);
  Result<HookId> b = install_entry_hook(addr(hk_starts_jrcxz), record, nullptr,
                                        bounded(hk_starts_jrcxz));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("jrcxz"), std::string::npos);
}

} // namespace
} // namespace ubtrace::runtime::hook
