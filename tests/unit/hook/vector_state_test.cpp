// Vector state across hooks: handlers that clobber every vector register
// must not change what a function computes from float/__m256d arguments,
// at entry or at return (the return value is in xmm0/ymm0).
#include "runtime/hook/hook.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <vector>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounded;

std::atomic<long> g_clobbers{0};

__attribute__((target("avx"))) void clobber_vectors(PtRegs *, void *) {
  // All ones in ymm0-15, as an AVX memcpy plus vzeroupper would not even
  // bother to do: the worst case.
  __asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n vmovdqa %%ymm0, %%ymm1\n"
                   "vmovdqa %%ymm0, %%ymm2\n vmovdqa %%ymm0, %%ymm3\n"
                   "vmovdqa %%ymm0, %%ymm4\n vmovdqa %%ymm0, %%ymm5\n"
                   "vmovdqa %%ymm0, %%ymm6\n vmovdqa %%ymm0, %%ymm7\n"
                   "vmovdqa %%ymm0, %%ymm8\n vmovdqa %%ymm0, %%ymm9\n"
                   "vmovdqa %%ymm0, %%ymm10\n vmovdqa %%ymm0, %%ymm11\n"
                   "vmovdqa %%ymm0, %%ymm12\n vmovdqa %%ymm0, %%ymm13\n"
                   "vmovdqa %%ymm0, %%ymm14\n vmovdqa %%ymm0, %%ymm15\n" ::
                       : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
                         "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
                         "xmm13", "xmm14", "xmm15");
  g_clobbers.fetch_add(1);
}

void count_only(PtRegs *, void *) {
  g_clobbers.fetch_add(1);
}

bool have_avx() {
  return __builtin_cpu_supports("avx");
}

TEST(HookVectors, DoubleArgumentsSurviveAClobberingEntryHandler) {
  if (!have_avx())
    GTEST_SKIP() << "the clobbering handler needs AVX";
  long before = g_clobbers.load();
  Result<HookId> id = install_entry_hook(addr(hk_fma), clobber_vectors, nullptr,
                                         bounded(hk_fma));
  ASSERT_TRUE(id.ok()) << id.error();
  double (*volatile fma)(double, double, double) = hk_fma;
  EXPECT_EQ(fma(1.5, 4.0, 0.25), 6.25);
  EXPECT_EQ(fma(-2.0, 3.0, 1.0), -5.0);
  EXPECT_EQ(g_clobbers.load() - before, 2);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookVectors, ReturnValueInXmm0SurvivesAClobberingReturnHandler) {
  if (!have_avx())
    GTEST_SKIP() << "the clobbering handler needs AVX";
  Result<HookId> id = install_return_hook(addr(hk_fma), clobber_vectors,
                                          nullptr, bounded(hk_fma));
  ASSERT_TRUE(id.ok()) << id.error();
  double (*volatile fma)(double, double, double) = hk_fma;
  EXPECT_EQ(fma(2.0, 2.0, 0.5), 4.5);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

void check_ymm_add() {
  const double a[4] = {1.0, 2.0, 3.0, 4.0};
  const double b[4] = {10.0, 20.0, 30.0, 40.0};
  double out[4] = {};
  void (*volatile run)(const double *, const double *, double *) = hk_ymm_run;
  run(a, b, out);
  EXPECT_EQ(out[0], 11.0);
  EXPECT_EQ(out[1], 22.0);
  EXPECT_EQ(out[2], 33.0);
  EXPECT_EQ(out[3], 44.0);
}

TEST(HookVectors, YmmArgumentsAndResultSurvive) {
  if (!have_avx())
    GTEST_SKIP() << "hk_ymm_add needs AVX";
  check_ymm_add(); // unhooked
  Result<HookId> in =
      install_entry_hook(addr(hk_ymm_add), clobber_vectors, nullptr);
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(addr(hk_ymm_add), clobber_vectors, nullptr);
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_EQ(*hooked_mode(addr(hk_ymm_add)), PatchMode::Jump);
  check_ymm_add();
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

__attribute__((target("avx512f"))) void clobber_zmm(PtRegs *, void *) {
  __asm__ volatile("vpternlogd $0xff, %%zmm0, %%zmm0, %%zmm0\n"
                   "vmovdqa64 %%zmm0, %%zmm1\n"
                   "vmovdqa64 %%zmm0, %%zmm7\n"
                   "vmovdqa64 %%zmm0, %%zmm16\n" ::
                       : "xmm0", "xmm1", "xmm7", "xmm16");
  g_clobbers.fetch_add(1);
}

TEST(HookVectors, ZmmArgumentsAtAFunctionEntry) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "no AVX-512F on this machine";
  // Bounds given: the trampoline saves only zmm0-7 (the argument
  // registers), at full width.
  HookOptions o;
  o.function = {addr(hk_zmm_add), 7};
  Result<HookId> in =
      install_entry_hook(addr(hk_zmm_add), clobber_zmm, nullptr, o);
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(addr(hk_zmm_add), clobber_zmm, nullptr, o);
  ASSERT_TRUE(out.ok()) << out.error();
  const double a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const double b[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  double r[8] = {};
  void (*volatile run)(const double *, const double *, double *) = hk_zmm_run;
  run(a, b, r);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(r[i], 11.0 * (i + 1)) << i;
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

TEST(HookVectors, YmmArgumentsAtAFunctionEntry) {
  if (!have_avx())
    GTEST_SKIP() << "hk_ymm_add needs AVX";
  HookOptions o;
  o.function = {addr(hk_ymm_add), 5};
  Result<HookId> in =
      install_entry_hook(addr(hk_ymm_add), clobber_vectors, nullptr, o);
  ASSERT_TRUE(in.ok()) << in.error();
  check_ymm_add();
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

__attribute__((target("avx512f"))) void clobber_all_avx512(PtRegs *, void *) {
  __asm__ volatile(
      ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,"
      "24,25,26,27,28,29,30,31\n\t"
      "vpternlogd $0xff, %%zmm\\i, %%zmm\\i, %%zmm\\i\n\t.endr\n\t"
      ".irp i,1,2,3,4,5,6,7\n\tkxnorw %%k\\i, %%k\\i, %%k\\i\n\t.endr" ::
          : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
            "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
            "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",
            "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28",
            "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6",
            "k7");
  g_clobbers.fetch_add(1);
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

// Away from a function's entry any register may be live: the trampoline
// keeps them all (by moves where the CPU reports XINUSE, else XSAVE).
TEST(HookVectors, YmmLiveInTheMiddleOfAFunctionSurvive) {
  if (!have_avx())
    GTEST_SKIP() << "hk_ymm_mid needs AVX";
  long before = g_clobbers.load();
  Result<HookId> id = install_entry_hook(
      addr(hk_ymm_mid_probe), clobber_vectors, nullptr, bounded(hk_ymm_mid));
  ASSERT_TRUE(id.ok()) << id.error();
  ASSERT_EQ(*hooked_mode(addr(hk_ymm_mid_probe)), PatchMode::Jump);
  std::vector<uint8_t> in = pattern(16 * 32), out(16 * 32);
  void (*volatile run)(const uint8_t *, uint8_t *) = hk_ymm_mid;
  run(in.data(), out.data());
  EXPECT_EQ(in, out);
  EXPECT_EQ(g_clobbers.load() - before, 1);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

TEST(HookVectors, ZmmAndOpmasksLiveInTheMiddleOfAFunctionSurvive) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "no AVX-512F on this machine";
  long before = g_clobbers.load();
  Result<HookId> id = install_entry_hook(
      addr(hk_zmm_mid_probe), clobber_all_avx512, nullptr, bounded(hk_zmm_mid));
  ASSERT_TRUE(id.ok()) << id.error();
  ASSERT_EQ(*hooked_mode(addr(hk_zmm_mid_probe)), PatchMode::Jump);
  std::vector<uint8_t> in = pattern(2048 + 64), out(2048 + 64);
  void (*volatile run)(const uint8_t *, uint8_t *) = hk_zmm_mid;
  run(in.data(), out.data());
  EXPECT_TRUE(std::equal(in.begin(), in.begin() + 2048, out.begin()))
      << "zmm0-31 changed";
  for (int k = 1; k < 8; ++k) // kmovw: 16 bits of each
    EXPECT_EQ(std::memcmp(&in[2048 + k * 8], &out[2048 + k * 8], 2), 0)
        << "k" << k;
  EXPECT_EQ(g_clobbers.load() - before, 1);
  ASSERT_TRUE(uninstall_hook(*id).ok());
}

// Fills the x87 stack: with a long double result left in st0 this would
// overflow it (and destroy the result) unless the trampoline set it aside.
void fill_x87(PtRegs *, void *) {
  __asm__ volatile("fldz\n fldz\n fldz\n fldz\n fldz\n fldz\n fldz\n fldz\n"
                   "fstp %%st(0)\n fstp %%st(0)\n fstp %%st(0)\n"
                   "fstp %%st(0)\n fstp %%st(0)\n fstp %%st(0)\n"
                   "fstp %%st(0)\n fstp %%st(0)\n" ::
                       : "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)",
                         "st(6)", "st(7)");
  g_clobbers.fetch_add(1);
}

TEST(HookVectors, LongDoubleResultSurvivesAnX87Handler) {
  long double (*volatile sum)(long double, long double) = hk_ld_sum;
  EXPECT_EQ(sum(1.25L, 2.5L), 3.75L); // unhooked
  long double big = sum(-1e300L, 3e300L);
  long before = g_clobbers.load();
  Result<HookId> out = install_return_hook(addr(hk_ld_sum), fill_x87, nullptr,
                                           bounded(hk_ld_sum));
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_EQ(sum(1.25L, 2.5L), 3.75L);
  EXPECT_EQ(sum(-1e300L, 3e300L), big); // beyond double's range of precision
  EXPECT_EQ(g_clobbers.load() - before, 2);
  ASSERT_TRUE(uninstall_hook(*out).ok());
}

TEST(HookVectors, NotTouchedHandlersSkipTheSave) {
  HookOptions o = bounded(hk_fma);
  o.vectors = VectorState::NotTouched;
  long before = g_clobbers.load();
  Result<HookId> in = install_entry_hook(addr(hk_fma), count_only, nullptr, o);
  ASSERT_TRUE(in.ok()) << in.error();
  Result<HookId> out =
      install_return_hook(addr(hk_fma), count_only, nullptr, o);
  ASSERT_TRUE(out.ok()) << out.error();
  double (*volatile fma)(double, double, double) = hk_fma;
  EXPECT_EQ(fma(3.0, 3.0, 1.0), 10.0);
  EXPECT_EQ(g_clobbers.load() - before, 2);
  ASSERT_TRUE(uninstall_hook(*out).ok());
  ASSERT_TRUE(uninstall_hook(*in).ok());
}

} // namespace
} // namespace ubtrace::runtime::hook
