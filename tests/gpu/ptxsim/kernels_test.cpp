// kernels/sim_kernels.cu through nvcc -ptx and ptxsim: warp intrinsics
// (shfl, vote, redux, match, activemask), device printf, atomics from
// several host threads, dynamic shared memory, integer and float
// conversions; each against the same computation written in C++.
#include "tests/gpu/ptxsim/test_support.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace ubtrace::ptxsim::test {
namespace {

std::unique_ptr<Module> kernels() {
  return load_or_fail(app_ptx("sim_kernels"));
}

TEST(PtxsimKernels, DevicePrintfFormats) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  int i = -42;
  long long l = -1234567890123LL;
  double d = 3.14159;
  float f = 2.5f;
  const char *s = "hey";
  unsigned u = 0xdeadbeefu;
  void *params[] = {&i, &l, &d, &f, &s, &u};
  std::vector<std::string> lines;
  LaunchOptions options;
  options.printf_sink = [&](std::string_view text) {
    lines.emplace_back(text);
  };
  auto r = m->launch("printf_kernel", {1}, {3}, 0, params, options);
  ASSERT_TRUE(r) << r.error();
  std::sort(lines.begin(), lines.end());
  ASSERT_EQ(lines.size(), 3u);
  for (unsigned t = 0; t < 3; ++t) {
    char expect[256];
    std::snprintf(
        expect, sizeof expect,
        "t%u i=%d l=%lld d=%.3f f=%g s=%s u=%u x=%#x c=%c [%5d|%-4d] %%\n", t,
        i, l, d, static_cast<double>(f), s, u, u, 'A' + t, i, i);
    EXPECT_EQ(lines[t], expect);
  }
}

TEST(PtxsimKernels, ShuffleXorWarpSum) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  std::vector<int> in(128), out(128);
  for (int t = 0; t < 128; ++t)
    in[t] = t * 3 - 50 + (t % 7) * 1000;
  int *pi = in.data(), *po = out.data();
  void *params[] = {&pi, &po};
  auto r = m->launch("warp_sum", {2}, {64}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int w = 0; w < 4; ++w) {
    int sum = 0;
    for (int l = 0; l < 32; ++l)
      sum += in[w * 32 + l];
    for (int l = 0; l < 32; ++l)
      ASSERT_EQ(out[w * 32 + l], sum) << "warp " << w << " lane " << l;
  }
}

TEST(PtxsimKernels, ShuffleModes) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  std::vector<int> in(32), up(32), down(32), idx(32), seg(32);
  for (int t = 0; t < 32; ++t)
    in[t] = t * t + 1;
  int *p[] = {in.data(), up.data(), down.data(), idx.data(), seg.data()};
  void *params[] = {&p[0], &p[1], &p[2], &p[3], &p[4]};
  auto r = m->launch("shfl_modes", {1}, {32}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(up[t], t >= 3 ? in[t - 3] : in[t]) << t;
    EXPECT_EQ(down[t], t + 5 < 32 ? in[t + 5] : in[t]) << t;
    EXPECT_EQ(idx[t], in[(t * 7) % 32]) << t;
    EXPECT_EQ(seg[t], t % 8 + 2 < 8 ? in[t + 2] : in[t]) << t;
  }
}

TEST(PtxsimKernels, VotesAndActivemaskInABranch) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  const int n = 64;
  std::vector<int> in(n), all(n), any(n);
  std::vector<unsigned> ballot(n), active(n);
  for (int t = 0; t < n; ++t)
    in[t] = t < 32 ? (t % 5 == 0) : 1;
  int *pi = in.data(), *pall = all.data(), *pany = any.data();
  unsigned *pb = ballot.data(), *pa = active.data();
  void *params[] = {&pi, &pb, &pall, &pany, &pa};
  auto r = m->launch("votes", {1}, {n}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int t = 0; t < n; ++t) {
    int w = t / 32;
    unsigned expect_ballot = 0, expect_active = 0;
    for (int l = 0; l < 32; ++l) {
      if (in[w * 32 + l] > 0)
        expect_ballot |= 1u << l;
      if ((w * 32 + l) % 3 == 0)
        expect_active |= 1u << l;
    }
    EXPECT_EQ(ballot[t], expect_ballot) << t;
    EXPECT_EQ(all[t], w == 1 ? 1 : 0) << t;
    EXPECT_EQ(any[t], 1) << t;
    EXPECT_EQ(active[t], t % 3 == 0 ? expect_active : 0u) << t;
  }
}

TEST(PtxsimKernels, ReduxSync) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  std::vector<unsigned> in(32), sum(32), max(32), bits(32);
  unsigned s = 0, mx = 0, o = 0, a = ~0u;
  for (unsigned t = 0; t < 32; ++t) {
    in[t] = (t * 37) % 101 + (t == 5 ? 1000u : 0u) + 0x100u;
    s += in[t];
    mx = std::max(mx, in[t]);
    o |= in[t];
    a &= in[t];
  }
  unsigned *p[] = {in.data(), sum.data(), max.data(), bits.data()};
  void *params[] = {&p[0], &p[1], &p[2], &p[3]};
  auto r = m->launch("reductions", {1}, {32}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(sum[t], s);
    EXPECT_EQ(max[t], mx);
    EXPECT_EQ(bits[t], o ^ a);
  }
}

TEST(PtxsimKernels, MatchAnyAndAll) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  const int n = 64;
  std::vector<int> in(n), pred(n);
  std::vector<unsigned> any(n), all(n);
  for (int t = 0; t < n; ++t)
    in[t] = t < 32 ? (t % 4) * 100 + (t < 16 ? 1 : 2) : 700 + t % 3;
  int *pi = in.data(), *pp = pred.data();
  unsigned *pany = any.data(), *pall = all.data();
  void *params[] = {&pi, &pany, &pall, &pp};
  auto r = m->launch("matches", {1}, {n}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int t = 0; t < n; ++t) {
    int w = t / 32;
    unsigned expect = 0;
    for (int l = 0; l < 32; ++l)
      if (in[w * 32 + l] == in[t])
        expect |= 1u << l;
    EXPECT_EQ(any[t], expect) << t;
    EXPECT_EQ(all[t], w == 1 ? 0xffffffffu : 0u) << t;
    EXPECT_EQ(pred[t], w == 1 ? 1 : 0) << t;
  }
}

TEST(PtxsimKernels, AtomicsFromSeveralHostThreads) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  int counter = 0, lo = 1000, hi = -1000, cas_sum = 0;
  float fsum = 0;
  unsigned long long big = 0;
  unsigned wrap = 0;
  int *pc = &counter, *plo = &lo, *phi = &hi, *pcas = &cas_sum;
  float *pf = &fsum;
  unsigned long long *pbig = &big;
  unsigned *pw = &wrap;
  void *params[] = {&pc, &pf, &pbig, &plo, &phi, &pw, &pcas};
  LaunchOptions options;
  options.host_threads = 4;
  const int threads = 16 * 128;
  auto r = m->launch("atomics", {16}, {128}, 0, params, options);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(counter, threads);
  EXPECT_EQ(fsum, 0.5f * threads);
  EXPECT_EQ(big, static_cast<unsigned long long>(threads) << 32);
  EXPECT_EQ(lo, -(threads - 1));
  EXPECT_EQ(hi, threads - 1);
  EXPECT_EQ(wrap, static_cast<unsigned>(threads % 10));
  EXPECT_EQ(cas_sum, threads * (threads - 1) / 2);
}

TEST(PtxsimKernels, DynamicSharedMemory) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  int n = 50;
  std::vector<int> data(3 * n);
  for (int i = 0; i < 3 * n; ++i)
    data[i] = i * 11 - 7;
  std::vector<int> before = data;
  int *pd = data.data();
  void *params[] = {&pd, &n};
  auto r = m->launch("reverse_dynamic", {3}, {64}, n * 4, params);
  ASSERT_TRUE(r) << r.error();
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < n; ++t)
      ASSERT_EQ(data[b * n + t], before[b * n + n - 1 - t]) << b << " " << t;
  // Too little dynamic shared memory: an out-of-bounds error, not a crash.
  auto small = m->launch("reverse_dynamic", {1}, {64}, 16, params);
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().find("shared memory access out of bounds"),
            std::string::npos)
      << small.error();
}

uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
  uint64_t bytes = (uint64_t(y) << 32) | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<uint32_t>((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xff)
         << (8 * i);
  return r;
}

TEST(PtxsimKernels, IntegerMath) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  std::vector<int> a = {100,        -100, 100,        -100, 12345678,
                        0x7fffffff, -1,   0x40000000, 0};
  std::vector<int> b = {7, 7, -7, -7, 3, 2, 33, 35, 5};
  const int n = static_cast<int>(a.size());
  std::vector<int> out(n * 12);
  int *pa = a.data(), *pb = b.data(), *po = out.data();
  void *params[] = {&pa, &pb, &po};
  auto r = m->launch("int_math", {1}, {static_cast<uint32_t>(n)}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int t = 0; t < n; ++t) {
    int x = a[t], y = b[t];
    uint32_t ux = static_cast<uint32_t>(x), uy = static_cast<uint32_t>(y);
    uint64_t wide = (uint64_t(uy) << 32 | ux) << (y & 31);
    int expect[12] = {
        x / y,
        x % y,
        static_cast<int>(ux / uy),
        static_cast<int>(ux % uy),
        std::countl_zero(ux),
        std::popcount(ux),
        static_cast<int>([&] {
          uint32_t v = 0;
          for (int i = 0; i < 32; ++i)
            v |= ((ux >> i) & 1u) << (31 - i);
          return v;
        }()),
        x == 0 ? 0 : std::countr_zero(ux) + 1,
        static_cast<int>((static_cast<int64_t>(x) * y) >> 32),
        static_cast<int>(byte_perm(ux, uy, 0x5140)),
        static_cast<int>(static_cast<uint32_t>(wide >> 32)),
        (x >> (y & 31)) ^ static_cast<int>(ux >> (y & 31)),
    };
    for (int k = 0; k < 12; ++k)
      EXPECT_EQ(out[t * 12 + k], expect[k])
          << "x=" << x << " y=" << y << " op " << k;
  }
}

// C++'s float -> int casts are undefined out of range; PTX saturates
// (NaN -> 0).
template <class I> I saturate(double v) {
  if (std::isnan(v))
    return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

TEST(PtxsimKernels, Conversions) {
  UBT_REQUIRE_APP_PTX();
  auto m = kernels();
  ASSERT_TRUE(m);
  std::vector<float> f = {2.5f,   -2.5f, 3.5f,    -0.4f, 1e10f,
                          -1e10f, NAN,   7.9999f, 0.5f,  -7.25f};
  std::vector<double> d = {1.5,  -2.75, 1e-3,  123456.789, 1e300,
                           -3.9, NAN,   2.5e9, 0.1,        -1e-300};
  const int n = static_cast<int>(f.size());
  std::vector<int> io(n * 6);
  std::vector<long long> lo(n);
  std::vector<float> go(n * 6);
  float *pf = f.data();
  double *pd = d.data();
  int *pi = io.data();
  long long *pl = lo.data();
  float *pg = go.data();
  void *params[] = {&pf, &pd, &pi, &pl, &pg};
  auto r = m->launch("conversions", {1}, {static_cast<uint32_t>(n)}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int t = 0; t < n; ++t) {
    float x = f[t];
    double y = d[t];
    float ax = x < 0 ? -x : x;
    int expect_i[6] = {saturate<int>(std::trunc(x)),
                       saturate<int>(std::nearbyint(x)),
                       saturate<int>(std::floor(x)),
                       saturate<int>(std::ceil(x)),
                       static_cast<int>(saturate<uint32_t>(std::trunc(ax))),
                       saturate<int>(std::trunc(y))};
    for (int k = 0; k < 6; ++k)
      EXPECT_EQ(io[t * 6 + k], expect_i[k])
          << "x=" << x << " y=" << y << " op " << k;
    EXPECT_EQ(lo[t], saturate<long long>(std::trunc(y * 1e10))) << y;
    float expect_g[6] = {std::floor(x),         std::ceil(x),
                         std::trunc(x),         std::rint(x),
                         static_cast<float>(y), std::sqrt(ax) + x / 3.0f};
    for (int k = 0; k < 6; ++k) {
      if (std::isnan(expect_g[k]))
        EXPECT_TRUE(std::isnan(go[t * 6 + k])) << "op " << k;
      else
        EXPECT_EQ(go[t * 6 + k], expect_g[k])
            << "x=" << x << " y=" << y << " op " << k;
    }
  }
}

} // namespace
} // namespace ubtrace::ptxsim::test
