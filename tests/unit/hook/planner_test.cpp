// Patch plans for real prologues, and the reasons given when a jump cannot
// be used.
#include "runtime/hook/planner.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounds_of;

template <class F> Result<PatchPlan> plan(F *fn, bool bounded = true) {
  Result<MemoryMap> map = MemoryMap::read_self();
  EXPECT_TRUE(map.ok());
  return plan_patch(addr(fn), bounded ? bounds_of(fn) : FunctionBounds{}, *map,
                    false);
}

TEST(HookPlanner, SingleLongInstruction) {
  Result<PatchPlan> p = plan(hk_rip_lea);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->mode, PatchMode::Jump);
  EXPECT_EQ(p->patch_start, addr(hk_rip_lea));
  EXPECT_EQ(p->insn_count, 1u);
  EXPECT_EQ(p->displaced_bytes, 7u);
}

TEST(HookPlanner, FramePointerPrologue) {
  Result<PatchPlan> p = plan(hk_frame);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->mode, PatchMode::Jump);
  EXPECT_EQ(p->insn_count, 3u); // push rbp; mov rbp,rsp; lea
  EXPECT_EQ(p->displaced_bytes, 1u + 3u + 4u);
}

TEST(HookPlanner, PatchGoesAfterEndbr64) {
  Result<PatchPlan> p = plan(hk_endbr);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->address, addr(hk_endbr));
  EXPECT_EQ(p->patch_start, addr(hk_endbr) + 4);
  EXPECT_EQ(p->mode, PatchMode::Jump);
}

TEST(HookPlanner, CallsAsLastDisplacedInstruction) {
  for (auto fn : {hk_call_first, hk_push_call, hk_call_rip, hk_jmp_first}) {
    Result<PatchPlan> p = plan(fn);
    ASSERT_TRUE(p.ok()) << p.error();
    EXPECT_EQ(p->mode, PatchMode::Jump);
  }
}

TEST(HookPlanner, TinyFunctionsUseTheTrapPath) {
  Result<PatchPlan> p1 = plan(hk_tiny1);
  ASSERT_TRUE(p1.ok()) << p1.error();
  EXPECT_EQ(p1->mode, PatchMode::Trap);
  EXPECT_EQ(p1->trap_reason, "the function is too short for a 5-byte jump");
  Result<PatchPlan> p3 = plan(hk_tiny3);
  ASSERT_TRUE(p3.ok()) << p3.error();
  EXPECT_EQ(p3->mode, PatchMode::Trap);
  EXPECT_EQ(p3->displaced_bytes, 2u); // mov eax, edi
}

TEST(HookPlanner, UnboundedCodeEndingEarlyUsesTheTrapPath) {
  Result<PatchPlan> p = plan(hk_tiny3, false);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->mode, PatchMode::Trap);
  EXPECT_NE(p->trap_reason.find("'ret' at"), std::string::npos)
      << p->trap_reason;
  EXPECT_NE(p->trap_reason.find("ends the code before 5 bytes"),
            std::string::npos);
}

TEST(HookPlanner, BranchIntoThePatchNeedsBoundsToBeSeen) {
  Result<PatchPlan> with = plan(hk_loop_head);
  ASSERT_TRUE(with.ok()) << with.error();
  EXPECT_EQ(with->mode, PatchMode::Trap);
  char expected[160];
  snprintf(expected, sizeof expected, "lands at 0x%llx, inside the bytes",
           static_cast<unsigned long long>(addr(hk_loop_head) + 2));
  EXPECT_NE(with->trap_reason.find(expected), std::string::npos)
      << with->trap_reason;
  Result<PatchPlan> without = plan(hk_loop_head, false);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->mode, PatchMode::Jump); // cannot know without bounds
}

TEST(HookPlanner, RefusesABreakpoint) {
  Result<PatchPlan> p = plan(hk_starts_int3);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().find("holds an int3"), std::string::npos) << p.error();
}

TEST(HookPlanner, RefusesJrcxz) {
  Result<PatchPlan> p = plan(hk_starts_jrcxz);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().find("'jrcxz' cannot run out of line"), std::string::npos)
      << p.error();
}

TEST(HookPlanner, RefusesDataAndUnmappedAddresses) {
  Result<MemoryMap> map = MemoryMap::read_self();
  ASSERT_TRUE(map.ok());
  Result<PatchPlan> data =
      plan_patch(reinterpret_cast<uint64_t>(&hk_data), {}, *map, false);
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.error().find("not in an executable mapping"),
            std::string::npos);
  Result<PatchPlan> none = plan_patch(0x10, {}, *map, false);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error(), "cannot hook 0x10: not mapped");
}

TEST(HookPlanner, ShadowStackForbidsEmulatedCalls) {
  Result<MemoryMap> map = MemoryMap::read_self();
  ASSERT_TRUE(map.ok());
  Result<PatchPlan> p =
      plan_patch(addr(hk_call_first), bounds_of(hk_call_first), *map, true);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().find("CET shadow stack"), std::string::npos);
}

} // namespace
} // namespace ubtrace::runtime::hook
