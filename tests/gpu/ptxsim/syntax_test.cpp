// PTX shapes the probes and their call sites use, on hand-written modules:
// module variables with initializers (and cuModuleGetGlobal's view of
// them), [sym+off] addresses, nested scopes that shadow registers, .func
// calls with parameters, a return value and their own .local per call
// frame (recursion), vector loads/stores, vector mov (pack/unpack), `_`.
#include "tests/gpu/ptxsim/test_support.h"

#include <cstring>
#include <vector>

namespace ubtrace::ptxsim::test {
namespace {

const std::string kModule = R"(//
// hand-written
//
.version 8.0
.target sm_90
.address_size 64

.global .align 4 .u32 table[4] = {10, 20, 30, 40};
.const .align 8 .u64 consts[2] = {0x1122334455667788, -2};
.global .align 8 .u64 pointers[2] = {table, generic(table)+8};

// factorial(n) with its argument spilled to a per-frame .local.
.func (.param .b64 fact_ret) fact(.param .b64 fact_n)
{
  .local .align 8 .b8 depot[8];
  .reg .pred %p<2>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [fact_n];
  st.local.u64 [depot], %rd1;
  setp.le.u64 %p1, %rd1, 1;
  @%p1 bra $L_base;
  sub.u64 %rd2, %rd1, 1;
  {
    .param .b64 arg;
    .param .b64 ret;
    st.param.b64 [arg], %rd2;
    call.uni (ret), fact, (arg);
    ld.param.b64 %rd3, [ret];
  }
  ld.local.u64 %rd4, [depot];
  mul.lo.u64 %rd5, %rd3, %rd4;
  st.param.b64 [fact_ret], %rd5;
  ret;
$L_base:
  mov.u64 %rd6, 1;
  st.param.b64 [fact_ret], %rd6;
  ret;
}

.visible .entry shapes(.param .u64 shapes_out)
{
  .local .align 16 .b8 scratch[16];
  .reg .b32 %r<12>;
  .reg .b16 %h<3>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [shapes_out];
  mov.u32 %r1, 7;
  {
    .reg .b32 %r1;            // shadows the outer %r1
    mov.u32 %r1, 99;
    st.global.u32 [%rd1+4], %r1;
  }
  st.global.u32 [%rd1], %r1;
  ld.global.u32 %r2, [table+8];
  st.global.u32 [%rd1+8], %r2;
  ld.const.u64 %rd2, [consts];
  st.global.u64 [%rd1+16], %rd2;
  ld.const.u64 %rd3, [consts+8];
  st.global.u64 [%rd1+24], %rd3;
  mov.u64 %rd4, pointers;
  ld.global.u64 %rd5, [%rd4+8];
  ld.u32 %r3, [%rd5];
  st.global.u32 [%rd1+32], %r3;
  {
    .param .b64 a;
    .param .b64 r;
    mov.u64 %rd6, 10;
    st.param.b64 [a], %rd6;
    call.uni (r), fact, (a);
    ld.param.b64 %rd7, [r];
  }
  st.global.u64 [%rd1+40], %rd7;
  mov.u32 %r4, 1;
  mov.u32 %r5, 2;
  mov.u32 %r6, 3;
  mov.u32 %r7, 4;
  st.local.v4.u32 [scratch], {%r4, %r5, %r6, %r7};
  ld.local.v2.u32 {%r8, _}, [scratch+8];
  st.global.u32 [%rd1+48], %r8;
  mov.b64 %rd8, {%r4, %r7};
  st.global.u64 [%rd1+56], %rd8;
  mov.b32 {%h1, %h2}, %r2;
  cvt.u32.u16 %r9, %h2;
  cvt.u32.u16 %r10, %h1;
  add.u32 %r11, %r9, %r10;
  st.global.u32 [%rd1+64], %r11;
  ret;
}
)";

TEST(PtxsimSyntax, ProbeShapes) {
  auto m = load_or_fail(kModule);
  ASSERT_TRUE(m);
  auto table = m->global("table");
  ASSERT_TRUE(table) << table.error();
  EXPECT_EQ(table->second, 16u);
  uint32_t *t = static_cast<uint32_t *>(table->first);
  EXPECT_EQ(t[3], 40u);
  t[2] = 0x00050003; // written by the host (cuMemcpyHtoD to a global)
  auto pointers = m->global("pointers");
  ASSERT_TRUE(pointers);
  EXPECT_EQ(static_cast<uint64_t *>(pointers->first)[0],
            reinterpret_cast<uintptr_t>(t));

  std::vector<uint8_t> out(72, 0);
  uint8_t *po = out.data();
  void *params[] = {&po};
  auto r = m->launch("shapes", {1}, {2}, 0, params);
  ASSERT_TRUE(r) << r.error();
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, out.data() + at, 4);
    return v;
  };
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, out.data() + at, 8);
    return v;
  };
  EXPECT_EQ(u32(0), 7u);
  EXPECT_EQ(u32(4), 99u);
  EXPECT_EQ(u32(8), 0x00050003u);
  EXPECT_EQ(u64(16), 0x1122334455667788u);
  EXPECT_EQ(u64(24), static_cast<uint64_t>(-2));
  EXPECT_EQ(u32(32), 0x00050003u); // through the pointer table: table+8
  EXPECT_EQ(u64(40), 3628800u);    // 10!
  EXPECT_EQ(u32(48), 3u);
  EXPECT_EQ(u64(56), (uint64_t(4) << 32) | 1u);
  EXPECT_EQ(u32(64), 8u); // 0x0005 + 0x0003
}

} // namespace
} // namespace ubtrace::ptxsim::test
