// Error paths: what ptxsim cannot run is a load error naming the line and
// its text; a kernel that touches an address below 64 KiB (a null pointer)
// ends its launch with an error, and the process and module live on.
#include "tests/gpu/ptxsim/test_support.h"

#include <vector>

namespace ubtrace::ptxsim::test {
namespace {

const char kHeader[] = ".version 8.0\n.target sm_90\n.address_size 64\n";

TEST(PtxsimErrors, UnsupportedOpcodeNamesItsLine) {
  std::string ptx = std::string(kHeader) + R"(
.visible .entry k()
{
  .reg .b32 %r<3>;
  mov.u32 %r1, 1;
  frobnicate.u32 %r2, %r1;
  ret;
}
)";
  auto m = Module::load(ptx);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error(), "line 9: unsupported opcode 'frobnicate.u32': "
                       "frobnicate.u32 %r2, %r1;");
}

TEST(PtxsimErrors, UnsupportedModifierAndSyntax) {
  auto carry = Module::load(std::string(kHeader) + R"(
.visible .entry k()
{
  .reg .b32 %r<3>;
  add.cc.u32 %r1, %r1, %r2;
}
)");
  ASSERT_FALSE(carry);
  EXPECT_NE(carry.error().find("line 8: unsupported opcode 'add.cc.u32'"),
            std::string::npos)
      << carry.error();
  auto unknown = Module::load(std::string(kHeader) + R"(
.visible .entry k()
{
  .reg .b32 %r<3>;
  mov.u32 %r1, %r7;
}
)");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("line 8: unknown symbol '%r7'"),
            std::string::npos)
      << unknown.error();
  auto label = Module::load(std::string(kHeader) + R"(
.visible .entry k()
{
  bra.uni $L_nowhere;
}
)");
  ASSERT_FALSE(label);
  EXPECT_NE(label.error().find("unknown label '$L_nowhere'"), std::string::npos)
      << label.error();
}

const std::string kLoad = std::string(kHeader) + R"(
.visible .entry load(.param .u64 load_src, .param .u64 load_dst)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [load_src];
  ld.param.u64 %rd2, [load_dst];
  cvta.to.global.u64 %rd3, %rd1;
  ld.global.u32 %r1, [%rd3+8];
  add.s32 %r2, %r1, 1;
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

TEST(PtxsimErrors, NullPointerLoadEndsTheLaunchNotTheProcess) {
  auto m = load_or_fail(kLoad);
  ASSERT_TRUE(m);
  uint32_t *src = nullptr;
  uint32_t dst = 0;
  uint32_t *pd = &dst;
  void *params[] = {&src, &pd};
  EXPECT_EQ(launch_error(*m, "load", {4}, {64}, params),
            "illegal address 0x8 at line 12: ld.global.u32 %r1, [%rd3+8];");
  EXPECT_EQ(dst, 0u);
  // The module still runs with a good pointer.
  uint32_t values[4] = {0, 0, 41, 0};
  src = values;
  auto ok = m->launch("load", {1}, {1}, 0, params);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(dst, 42u);
}

TEST(PtxsimErrors, LowAddressStoreIsAnError) {
  auto m = load_or_fail(kLoad);
  ASSERT_TRUE(m);
  uint32_t values[4] = {0, 0, 1, 0};
  uint32_t *src = values;
  uintptr_t low = 0x1000;
  void *params[] = {&src, &low};
  EXPECT_EQ(launch_error(*m, "load", {1}, {32}, params),
            "illegal address 0x1000 at line 14: st.global.u32 [%rd2], %r2;");
}

TEST(PtxsimErrors, BadLaunches) {
  auto m = load_or_fail(kLoad);
  ASSERT_TRUE(m);
  auto none = m->launch("nope", {1}, {1}, 0, nullptr);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), "no kernel 'nope' in the module");
  auto no_params = m->launch("load", {1}, {1}, 0, nullptr);
  ASSERT_FALSE(no_params);
  auto too_big = m->launch("load", {1}, {2048}, 0, nullptr);
  ASSERT_FALSE(too_big);
  EXPECT_FALSE(m->params("nope"));
  EXPECT_FALSE(m->global("nope"));
}

} // namespace
} // namespace ubtrace::ptxsim::test
