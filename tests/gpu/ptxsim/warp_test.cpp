// Warp semantics on hand-written PTX: activemask and match.any.sync in
// uniform and divergent code get the masks ptxsim promises (lanes waiting
// at the same instruction form a group), lanes that can never meet in a
// .sync collective are a "warp deadlock" error, a lane spinning forever
// stops at max_instructions, nanosleep lets a spinning lane's siblings run,
// and exited threads count as arrived at a barrier.
#include "tests/gpu/ptxsim/test_support.h"

#include <vector>

namespace ubtrace::ptxsim::test {
namespace {

const char kHeader[] = ".version 8.0\n.target sm_90\n.address_size 64\n";

// The 1-based line of the first line of `text` containing `needle`.
int line_of(const std::string &text, const std::string &needle) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  int line = 1;
  for (size_t i = 0; i < at; ++i)
    line += text[i] == '\n';
  return line;
}

const std::string kMasks = std::string(kHeader) + R"(
.visible .entry warp_masks(.param .u64 warp_masks_out, .param .u32 warp_masks_n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [warp_masks_out];
  ld.param.u32 %r1, [warp_masks_n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %laneid;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  add.s64 %rd6, %rd5, %rd4;
  add.s64 %rd7, %rd6, %rd4;
  activemask.b32 %r4;
  st.global.u32 [%rd3], %r4;
  setp.lt.u32 %p1, %r3, 10;
  @%p1 bra $L_low;
  activemask.b32 %r5;
  st.global.u32 [%rd5], %r5;
  rem.u32 %r6, %r3, 4;
  cvt.u64.u32 %rd8, %r6;
  match.any.sync.b64 %r7, %rd8, %r5;
  st.global.u32 [%rd7], %r7;
  bra.uni $L_join;
$L_low:
  activemask.b32 %r5;
  st.global.u32 [%rd5], %r5;
  and.b32 %r6, %r3, 1;
  cvt.u64.u32 %rd8, %r6;
  match.any.sync.b64 %r7, %rd8, %r5;
  st.global.u32 [%rd7], %r7;
$L_join:
  activemask.b32 %r8;
  rem.u32 %r9, %r3, 3;
  cvt.u64.u32 %rd9, %r9;
  match.any.sync.b64 %r10, %rd9, %r8;
  st.global.u32 [%rd6], %r10;
  ret;
}
)";

// Lanes of warp `lane / 32` (warp_size lanes) for which pred holds.
template <class Pred> uint32_t lanes_where(uint32_t warp_size, Pred pred) {
  uint32_t mask = 0;
  for (uint32_t l = 0; l < warp_size; ++l)
    if (pred(l))
      mask |= 1u << l;
  return mask;
}

TEST(PtxsimWarp, ActivemaskAndMatchAnyUniformAndDivergent) {
  auto m = load_or_fail(kMasks);
  ASSERT_TRUE(m);
  const uint32_t n = 40; // warp 0: 32 lanes, warp 1: 8 lanes
  std::vector<uint32_t> out(4 * n, 0xdeadbeef);
  uint32_t *po = out.data();
  uint32_t count = n;
  void *params[] = {&po, &count};
  auto r = m->launch("warp_masks", {1}, {n}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (uint32_t t = 0; t < n; ++t) {
    uint32_t lane = t % 32, size = t < 32 ? 32 : n - 32;
    // Uniform code: the whole (possibly partial) warp.
    EXPECT_EQ(out[t], lanes_where(size, [](uint32_t) { return true; })) << t;
    // Divergent branches: each side its own group.
    bool low = lane < 10;
    EXPECT_EQ(out[n + t],
              lanes_where(size, [&](uint32_t l) { return (l < 10) == low; }))
        << t;
    // After the join: converged again; lanes with equal lane % 3.
    EXPECT_EQ(out[2 * n + t],
              lanes_where(size, [&](uint32_t l) { return l % 3 == lane % 3; }))
        << t;
    // match inside the branches, over each branch's own mask.
    uint32_t expect_branch =
        low ? lanes_where(
                  size, [&](uint32_t l) { return l < 10 && l % 2 == lane % 2; })
            : lanes_where(size, [&](uint32_t l) {
                return l >= 10 && l % 4 == lane % 4;
              });
    EXPECT_EQ(out[3 * n + t], expect_branch) << t;
  }
}

const std::string kDeadlockExited = std::string(kHeader) + R"(
.visible .entry half_exit()
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, %laneid;
  setp.ge.u32 %p1, %r1, 16;
  @%p1 exit;
  mov.u64 %rd1, 7;
  match.any.sync.b64 %r2, %rd1, -1;
  ret;
}
)";

TEST(PtxsimWarp, MatchWithExitedMembersIsADeadlockError) {
  auto m = load_or_fail(kDeadlockExited);
  ASSERT_TRUE(m);
  std::string error = launch_error(*m, "half_exit", {2}, {64});
  EXPECT_NE(error.find("warp deadlock at line " +
                       std::to_string(line_of(kDeadlockExited, "match.any"))),
            std::string::npos)
      << error;
}

const std::string kDeadlockSplit = std::string(kHeader) + R"(
.visible .entry split_match()
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, %laneid;
  cvt.u64.u32 %rd1, %r1;
  setp.ge.u32 %p1, %r1, 8;
  @%p1 bra $L_other;
  match.any.sync.b64 %r2, %rd1, 0xffffffff;
  ret;
$L_other:
  match.any.sync.b64 %r2, %rd1, 0xffffffff;
  ret;
}
)";

TEST(PtxsimWarp, MatchAtDifferentInstructionsIsADeadlockError) {
  auto m = load_or_fail(kDeadlockSplit);
  ASSERT_TRUE(m);
  std::string error = launch_error(*m, "split_match", {1}, {32});
  EXPECT_NE(error.find("warp deadlock at line "), std::string::npos) << error;
  EXPECT_NE(error.find("match.any.sync.b64"), std::string::npos) << error;
}

const std::string kSpin = std::string(kHeader) + R"(
.visible .entry spin(.param .u64 spin_flag)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [spin_flag];
$L_wait:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L_wait;
  ret;
}
)";

TEST(PtxsimWarp, SpinningForeverStopsAtTheInstructionLimit) {
  auto m = load_or_fail(kSpin);
  ASSERT_TRUE(m);
  uint32_t flag = 0; // never set
  uint32_t *pf = &flag;
  void *params[] = {&pf};
  LaunchOptions options;
  options.max_instructions = 2'000'000;
  std::string error = launch_error(*m, "spin", {2}, {64}, params, options);
  EXPECT_NE(error.find("instruction limit (2000000) exceeded"),
            std::string::npos)
      << error;
  // With the flag set the same kernel finishes.
  flag = 1;
  auto ok = m->launch("spin", {2}, {64}, 0, params, options);
  ASSERT_TRUE(ok) << ok.error();
}

// Lane 0 waits (with nanosleep) for a value lane 31 stores after a loop;
// lane 0 runs first, so only the nanosleep yield lets lane 31 get there.
const std::string kHandoff = std::string(kHeader) + R"(
.visible .entry handoff(.param .u64 handoff_cell, .param .u64 handoff_out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [handoff_cell];
  ld.param.u64 %rd2, [handoff_out];
  mov.u32 %r1, %laneid;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L_wait;
  setp.ne.u32 %p2, %r1, 31;
  @%p2 exit;
  mov.u32 %r2, 0;
$L_work:
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p3, %r2, 1000;
  @%p3 bra $L_work;
  st.volatile.global.u32 [%rd1], %r2;
  exit;
$L_wait:
  ld.volatile.global.u32 %r3, [%rd1];
  setp.ne.u32 %p3, %r3, 0;
  @%p3 bra $L_done;
  nanosleep.u32 100;
  bra.uni $L_wait;
$L_done:
  add.u32 %r4, %r3, 1;
  st.global.u32 [%rd2], %r4;
  ret;
}
)";

TEST(PtxsimWarp, NanosleepLetsOtherLanesRun) {
  auto m = load_or_fail(kHandoff);
  ASSERT_TRUE(m);
  uint32_t cell = 0, out = 0;
  uint32_t *pc = &cell, *po = &out;
  void *params[] = {&pc, &po};
  LaunchOptions options;
  options.max_instructions = 10'000'000;
  auto r = m->launch("handoff", {1}, {32}, 0, params, options);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(cell, 1000u);
  EXPECT_EQ(out, 1001u);
}

// Threads 20.. exit before the barrier; the rest still pass it, and read
// what the others stored into shared memory before it.
const std::string kExitBarrier = std::string(kHeader) + R"(
.visible .entry exit_barrier(.param .u64 exit_barrier_out)
{
  .shared .align 4 .b8 cells[256];
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [exit_barrier_out];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 20;
  @%p1 exit;
  mov.u32 %r2, cells;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  mul.lo.u32 %r5, %r1, %r1;
  st.shared.u32 [%r4], %r5;
  bar.sync 0;
  sub.u32 %r6, 19, %r1;
  shl.b32 %r7, %r6, 2;
  add.u32 %r8, %r2, %r7;
  ld.shared.u32 %r9, [%r8];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}
)";

TEST(PtxsimWarp, ExitedThreadsCountAsArrivedAtBarriers) {
  auto m = load_or_fail(kExitBarrier);
  ASSERT_TRUE(m);
  std::vector<uint32_t> out(64, 7);
  uint32_t *po = out.data();
  void *params[] = {&po};
  auto r = m->launch("exit_barrier", {3}, {64}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (uint32_t t = 0; t < 20; ++t)
    EXPECT_EQ(out[t], (19 - t) * (19 - t)) << t;
  for (uint32_t t = 20; t < 64; ++t)
    EXPECT_EQ(out[t], 7u) << t;
}

} // namespace
} // namespace ubtrace::ptxsim::test
