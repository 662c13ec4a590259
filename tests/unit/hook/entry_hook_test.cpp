// Entry hooks on real prologues, in this process: the handler sees the
// arguments in pt_regs, the function still computes the same result, and
// uninstalling restores the exact original bytes.
#include "runtime/hook/hook.h"
#include "runtime/hook/trap_bytes.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <atomic>
#include <climits>
#include <functional>
#include <gtest/gtest.h>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounded;
using testing::bytes_at;
using testing::call;

struct Seen {
  std::atomic<long> hits{0};
  uint64_t rdi = 0, rsi = 0, rdx = 0, rcx = 0, r8 = 0, r9 = 0;
  uint64_t rip = 0, rsp = 0, at_rsp = 0, orig_rax = 0, cs = 0, ss = 0;
};

void record(PtRegs *regs, void *user) {
  auto *s = static_cast<Seen *>(user);
  s->rdi = regs->rdi;
  s->rsi = regs->rsi;
  s->rdx = regs->rdx;
  s->rcx = regs->rcx;
  s->r8 = regs->r8;
  s->r9 = regs->r9;
  s->rip = regs->rip;
  s->rsp = regs->rsp;
  s->at_rsp = *reinterpret_cast<const uint64_t *>(regs->rsp);
  s->orig_rax = regs->orig_rax;
  s->cs = regs->cs;
  s->ss = regs->ss;
  s->hits.fetch_add(1);
}

struct Case {
  const char *name;
  uint64_t fn;
  HookOptions options;
  std::function<long(long)> run; // calls the function with one argument
  std::function<long(long)> expect;
};

std::vector<Case> single_argument_cases() {
  return {
      {"rip_lea", addr(hk_rip_lea), bounded(hk_rip_lea),
       [](long x) { return call(hk_rip_lea, x); },
       [](long x) { return hk_data + x; }},
      {"rip_mov", addr(hk_rip_mov), bounded(hk_rip_mov),
       [](long x) { return call(hk_rip_mov, x); },
       [](long x) { return hk_data + x; }},
      {"rip_cmp", addr(hk_rip_cmp), bounded(hk_rip_cmp),
       [](long x) { return call(hk_rip_cmp, x); },
       [](long x) { return x + 1; }},
      {"short_jcc", addr(hk_short_jcc), bounded(hk_short_jcc),
       [](long x) { return call(hk_short_jcc, x); },
       [](long x) { return x == 0 ? 2L : 1L; }},
      {"call_first", addr(hk_call_first), bounded(hk_call_first),
       [](long x) { return call(hk_call_first, x); },
       [](long x) { return x + 1; }},
      {"push_call", addr(hk_push_call), bounded(hk_push_call),
       [](long x) { return call(hk_push_call, x); },
       [](long x) { return x + 1; }},
      {"call_rip", addr(hk_call_rip), bounded(hk_call_rip),
       [](long x) { return call(hk_call_rip, x); },
       [](long x) { return x + 1; }},
      {"jmp_first", addr(hk_jmp_first), bounded(hk_jmp_first),
       [](long x) { return call(hk_jmp_first, x); },
       [](long x) { return x + 1; }},
      {"c_function", addr(hk_counted), bounded(hk_counted),
       [](long x) { return call(hk_counted, x); },
       [](long x) { return x * 3 + 1; }},
  };
}

TEST(HookEntry, SeesArgumentsAndKeepsResults) {
  for (const Case &c : single_argument_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> before = bytes_at(c.fn, 24);
    Seen seen;
    Result<HookId> id = install_entry_hook(c.fn, record, &seen, c.options);
    ASSERT_TRUE(id.ok()) << id.error();
    Result<PatchMode> mode = hooked_mode(c.fn);
    ASSERT_TRUE(mode.ok());
    EXPECT_EQ(*mode, PatchMode::Jump);
    EXPECT_NE(bytes_at(c.fn, 24), before); // patched

    for (long x : {0L, 1L, -7L, 123456789L}) {
      EXPECT_EQ(c.run(x), c.expect(x)) << "x = " << x;
      EXPECT_EQ(static_cast<long>(seen.rdi), x);
    }
    EXPECT_EQ(seen.hits.load(), 4);
    EXPECT_EQ(seen.rip, c.fn);
    EXPECT_EQ(seen.orig_rax, ~uint64_t{0});
    EXPECT_EQ(seen.cs, 0x33u);
    EXPECT_EQ(seen.ss, 0x2Bu);

    ASSERT_TRUE(uninstall_hook(*id).ok());
    EXPECT_EQ(bytes_at(c.fn, 24), before); // exactly restored
    EXPECT_EQ(c.run(5), c.expect(5));
    EXPECT_EQ(seen.hits.load(), 4); // not called after uninstall
  }
}

TEST(HookEntry, StackPointerPointsAtTheReturnAddress) {
  Seen seen;
  Result<HookId> id = install_entry_hook(addr(hk_helper_inc), record, &seen,
                                         bounded(hk_helper_inc));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(hk_invoke(hk_helper_inc, 41), 42);
  EXPECT_EQ(seen.at_rsp, addr(hk_invoke_ret));
  EXPECT_EQ(seen.rip, addr(hk_helper_inc));
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookEntry, SixArgumentsAndATrapBytePlacedJump) {
  // push rbp; mov rbp,rsp leaves instruction starts at +1 and +4: the
  // jump's rel32 must carry trap bytes there.
  uint64_t fn = addr(hk_frame);
  Seen seen;
  Result<HookId> id = install_entry_hook(fn, record, &seen, bounded(hk_frame));
  ASSERT_TRUE(id.ok()) << id.error();
  ASSERT_EQ(*hooked_mode(fn), PatchMode::Jump);
  std::vector<uint8_t> patched = bytes_at(fn, 5);
  EXPECT_EQ(patched[0], 0xE9);
  EXPECT_TRUE(is_trap_byte(patched[1]));
  EXPECT_TRUE(is_trap_byte(patched[4]));
  EXPECT_EQ(call(hk_frame, 1L, 2L, 3L, 4L, 5L, 6L), 21);
  EXPECT_EQ(seen.rdi, 1u);
  EXPECT_EQ(seen.rsi, 2u);
  EXPECT_EQ(seen.rdx, 3u);
  EXPECT_EQ(seen.rcx, 4u);
  EXPECT_EQ(seen.r8, 5u);
  EXPECT_EQ(seen.r9, 6u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookEntry, ThreadsResumingInsideThePatchAreRedirected) {
  // A thread that had run hk_frame's first instruction (or two) when the
  // jump went in resumes on a trap byte and continues in the relocated
  // copy, without firing the probe it already passed.
  uint64_t fn = addr(hk_frame);
  Seen seen;
  Result<HookId> id = install_entry_hook(fn, record, &seen, bounded(hk_frame));
  ASSERT_TRUE(id.ok()) << id.error();
  uint64_t before = hook_stats().boundary_traps;
  EXPECT_EQ(call(hk_frame_resume1, 1L, 2L, 3L, 4L, 5L, 6L), 21);
  EXPECT_EQ(call(hk_frame_resume4, 10L, 20L, 30L, 40L, 50L, 60L), 210);
  EXPECT_EQ(hook_stats().boundary_traps - before, 2u);
  EXPECT_EQ(seen.hits.load(), 0);
  EXPECT_EQ(call(hk_frame, 1L, 1L, 1L, 1L, 1L, 1L), 6);
  EXPECT_EQ(seen.hits.load(), 1);
  ASSERT_TRUE(uninstall_hook(*id).ok());
  // Unpatched, the same entries run the original code.
  EXPECT_EQ(call(hk_frame_resume1, 1L, 2L, 3L, 4L, 5L, 6L), 21);
  EXPECT_EQ(hook_stats().boundary_traps - before, 2u);
}

void scramble_flags(PtRegs *, void *user) {
  // Leaves ZF=1 and CF=SF=OF=0 whatever the probed code had.
  __asm__ volatile("xor %%eax, %%eax" ::: "eax", "cc");
  static_cast<std::atomic<long> *>(user)->fetch_add(1);
}

TEST(HookEntry, FlagsLiveAtAMidFunctionProbeSurvive) {
  struct Pair {
    long a, b;
  };
  const Pair pairs[] = {{1, 2},         {2, 1},  {5, 5},  {LONG_MIN, 1},
                        {LONG_MAX, -1}, {-1, 0}, {0, -1}, {0x7f, 0x80}};
  std::vector<long> expected;
  for (long df : {0L, 1L})
    for (const Pair &p : pairs)
      expected.push_back(call(hk_flags, p.a, p.b, df));
  std::atomic<long> hits{0};
  HookOptions o = bounded(hk_flags);
  Result<HookId> id =
      install_entry_hook(addr(hk_flags_probe), scramble_flags, &hits, o);
  ASSERT_TRUE(id.ok()) << id.error();
  ASSERT_EQ(*hooked_mode(addr(hk_flags_probe)), PatchMode::Jump);
  size_t i = 0;
  for (long df : {0L, 1L})
    for (const Pair &p : pairs)
      EXPECT_EQ(call(hk_flags, p.a, p.b, df), expected[i++])
          << p.a << " vs " << p.b << " df " << df;
  EXPECT_EQ(hits.load(), 16);
  EXPECT_NE(expected[8] & 0x400, 0); // DF was really set in the second half
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookEntry, Endbr64StaysFirst) {
  uint64_t fn = addr(hk_endbr);
  std::vector<uint8_t> endbr = bytes_at(fn, 4);
  Seen seen;
  Result<HookId> id = install_entry_hook(fn, record, &seen, bounded(hk_endbr));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(bytes_at(fn, 4), endbr);
  EXPECT_EQ(bytes_at(fn + 4, 1)[0], 0xE9);
  EXPECT_EQ(call(hk_endbr, 10L, 3L), 16);
  EXPECT_EQ(seen.rip, fn); // the function's address, not the patch's
  EXPECT_EQ(seen.rsi, 3u);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

void set_rdi_41(PtRegs *regs, void *) {
  regs->rdi = 41;
}

TEST(HookEntry, RegisterChangesAreWrittenBack) {
  Result<HookId> id = install_entry_hook(addr(hk_helper_inc), set_rdi_41,
                                         nullptr, bounded(hk_helper_inc));
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(call(hk_helper_inc, 1000L), 42);
  ASSERT_TRUE(uninstall_hook(*id).ok());
  EXPECT_EQ(call(hk_helper_inc, 1000L), 1001);
}

TEST(HookEntry, OneEntryHookPerAddressAndCleanErrors) {
  Seen a, b;
  Result<HookId> id =
      install_entry_hook(addr(hk_rip_mov), record, &a, bounded(hk_rip_mov));
  ASSERT_TRUE(id.ok()) << id.error();
  Result<HookId> again =
      install_entry_hook(addr(hk_rip_mov), record, &b, bounded(hk_rip_mov));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("already has an entry hook"), std::string::npos);
  // An address inside the patched bytes.
  Result<HookId> inside = install_entry_hook(addr(hk_rip_mov) + 3, record, &b);
  ASSERT_FALSE(inside.ok());
  EXPECT_NE(inside.error().find("inside the bytes patched for the hook"),
            std::string::npos)
      << inside.error();
  ASSERT_TRUE(uninstall_hook(*id).ok());
  Result<void> twice = uninstall_hook(*id);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().find("has no entry hook"), std::string::npos);
}

TEST(HookEntry, ReinstallReusesTheSite) {
  Seen seen;
  for (int round = 0; round < 5; ++round) {
    Result<HookId> id = install_entry_hook(addr(hk_rip_lea), record, &seen,
                                           bounded(hk_rip_lea));
    ASSERT_TRUE(id.ok()) << id.error();
    EXPECT_EQ(call(hk_rip_lea, 1L), hk_data + 1);
    ASSERT_TRUE(uninstall_hook(*id).ok());
  }
  EXPECT_EQ(seen.hits.load(), 5);
}

TEST(HookEntry, CheckPatchable) {
  Result<Patchability> p =
      check_patchable(addr(hk_frame), testing::bounds_of(hk_frame));
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->mode, PatchMode::Jump);
  EXPECT_EQ(p->displaced_bytes, 8u);
  Result<Patchability> tiny =
      check_patchable(addr(hk_tiny2), testing::bounds_of(hk_tiny2));
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->mode, PatchMode::Trap);
  EXPECT_EQ(tiny->trap_reason, "the function is too short for a 5-byte jump");
  Result<Patchability> bad = check_patchable(addr(hk_starts_int3));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("holds an int3"), std::string::npos);
}

} // namespace
} // namespace ubtrace::runtime::hook
