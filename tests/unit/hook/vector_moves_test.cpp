// The probe path's vector state kept by moves (runtime/hook/vector_moves.h):
// a "probe" that writes every vector register and MXCSR changes nothing
// the traced code can see, and state in its initial form stays initial
// (or is zeroed where the probe wrote it).
#include "tests/unit/hook/vector_moves_rig.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::hook {
namespace {

using testing::moves_round_trip;
using testing::Start;

constexpr uint64_t kAvx = 1u << 2, kOpmask = 1u << 5, kHi16Zmm = 1u << 7;

const CpuFeatures *moves_cpu() {
  const CpuFeatures &cpu = cpu_features();
  if (!cpu.xinuse || cpu.width == VectorWidth::Xmm)
    return nullptr;
  return &cpu;
}

TEST(VectorMoves, LiveRegistersAndMxcsrSurviveAProbeThatWritesThemAll) {
  const CpuFeatures *cpu = moves_cpu();
  if (!cpu)
    GTEST_SKIP() << "this CPU has no XINUSE or no AVX: the probe path keeps "
                    "vector state with XSAVE";
  auto o = moves_round_trip(*cpu, Start::Everything, /*clobber=*/true);
  EXPECT_TRUE(o.low_kept);
  EXPECT_TRUE(o.high_kept);
  EXPECT_TRUE(o.opmask_kept);
  EXPECT_TRUE(o.mxcsr_kept);
}

TEST(VectorMoves, AvxValuesSurviveWithAvx512StateInitial) {
  const CpuFeatures *cpu = moves_cpu();
  if (!cpu)
    GTEST_SKIP() << "this CPU has no XINUSE or no AVX";
  auto o = moves_round_trip(*cpu, Start::Avx, /*clobber=*/true);
  EXPECT_TRUE(o.low_kept) << "ymm0-15 changed, or zmm0-15's upper bits set";
  EXPECT_TRUE(o.high_kept);
  EXPECT_TRUE(o.opmask_kept);
  EXPECT_TRUE(o.mxcsr_kept);
}

TEST(VectorMoves, InitialStateWrittenByTheProbeIsPutBack) {
  const CpuFeatures *cpu = moves_cpu();
  if (!cpu)
    GTEST_SKIP() << "this CPU has no XINUSE or no AVX";
  auto o = moves_round_trip(*cpu, Start::Sse, /*clobber=*/true);
  EXPECT_TRUE(o.low_kept);
  EXPECT_TRUE(o.high_kept) << "zmm16-31 not zero again";
  EXPECT_TRUE(o.opmask_kept) << "k1-7 not zero again";
  EXPECT_TRUE(o.mxcsr_kept);
  if (!(o.in_use_before & kAvx)) // the CPU reports clean upper halves
    EXPECT_FALSE(o.in_use_after & kAvx) << "upper halves left dirty";
}

TEST(VectorMoves, InitialStateTheProbeLeftAloneStaysInitial) {
  const CpuFeatures *cpu = moves_cpu();
  if (!cpu)
    GTEST_SKIP() << "this CPU has no XINUSE or no AVX";
  auto o = moves_round_trip(*cpu, Start::Sse, /*clobber=*/false);
  EXPECT_TRUE(o.low_kept);
  EXPECT_TRUE(o.high_kept);
  EXPECT_TRUE(o.opmask_kept);
  for (uint64_t c : {kAvx, kOpmask, kHi16Zmm})
    if (!(o.in_use_before & c))
      EXPECT_FALSE(o.in_use_after & c) << "component " << c << " dirtied";
}

} // namespace
} // namespace ubtrace::runtime::hook
