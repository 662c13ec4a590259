// Every sample app's kernels (tests/gpu/apps/*.cu), from nvcc's PTX, run
// through ptxsim on inputs chosen here; the expectation is the same
// computation done in C++ from the .cu's semantics, compared exactly (the
// float arithmetic is replayed with the operations nvcc chose, e.g. fmaf).
#include "tests/gpu/ptxsim/test_support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace ubtrace::ptxsim::test {
namespace {

std::string find_kernel(const Module &m, const std::string &part) {
  for (const std::string &k : m.kernels())
    if (k.find(part) != std::string::npos)
      return k;
  ADD_FAILURE() << "no kernel containing '" << part << "'";
  return part;
}

TEST(PtxsimApps, VectorAddMatchesHostSum) {
  UBT_REQUIRE_APP_PTX();
  auto m = load_or_fail(app_ptx("vector_add"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->kernels(), std::vector<std::string>{"_Z10vector_addPKfS0_Pfi"});
  int n = 5000; // not a multiple of the block: the tail threads skip
  std::vector<float> a(n), b(n), c(n + 64, -7.0f);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000) + 0.1f * static_cast<float>(i % 7);
    b[i] = static_cast<float>((i * 7) % 1000) * 0.5f + 0.3f;
  }
  const float *pa = a.data(), *pb = b.data();
  float *pc = c.data();
  void *params[] = {&pa, &pb, &pc, &n};
  LaunchOptions options;
  options.host_threads = 4;
  auto stats = m->launch("_Z10vector_addPKfS0_Pfi", {(5000 + 255) / 256}, {256},
                         0, params, options);
  ASSERT_TRUE(stats) << stats.error();
  EXPECT_EQ(stats->threads, 20u * 256u);
  EXPECT_GT(stats->instructions, stats->threads * 5);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
  for (int i = n; i < n + 64; ++i)
    ASSERT_EQ(c[i], -7.0f) << "written past the end at " << i;
}

// matmul.cu's tiled kernel, replayed: per tile, acc = fma(ta, tb, acc) for
// k = 0..15 with zero padding outside the matrix (nvcc -G does not
// contract: a rounded multiply, then an add).
std::vector<float> host_matmul(const std::vector<float> &a,
                               const std::vector<float> &b, int n, bool fused) {
  std::vector<float> c(static_cast<size_t>(n) * n);
  int tiles = (n + 15) / 16;
  for (int row = 0; row < n; ++row)
    for (int col = 0; col < n; ++col) {
      float acc = 0.0f;
      for (int t = 0; t < tiles; ++t)
        for (int k = 0; k < 16; ++k) {
          int ac = t * 16 + k, br = t * 16 + k;
          float ta = ac < n ? a[row * n + ac] : 0.0f;
          float tb = br < n ? b[br * n + col] : 0.0f;
          if (fused) {
            acc = std::fmaf(ta, tb, acc);
          } else {
            volatile float product = ta * tb; // no contraction here either
            acc = acc + product;
          }
        }
      c[row * n + col] = acc;
    }
  return c;
}

void run_matmul(int n, const std::string &ptx = "matmul") {
  auto m = load_or_fail(app_ptx(ptx));
  ASSERT_TRUE(m);
  std::string kernel = find_kernel(*m, "matmul_tiled");
  size_t count = static_cast<size_t>(n) * n;
  std::vector<float> a(count), b(count), c(count, -1.0f);
  for (size_t i = 0; i < count; ++i) {
    // Not exactly representable sums: the order of the fmas matters.
    a[i] = static_cast<float>(i % 17) * 0.37f - 1.1f;
    b[i] = static_cast<float>(i % 13) * 0.53f + 0.01f;
  }
  const float *pa = a.data(), *pb = b.data();
  float *pc = c.data();
  void *params[] = {&pa, &pb, &pc, &n};
  uint32_t g = static_cast<uint32_t>((n + 15) / 16);
  auto stats = m->launch(kernel, {g, g}, {16, 16}, 0, params);
  ASSERT_TRUE(stats) << stats.error();
  std::vector<float> expect = host_matmul(a, b, n, ptx == "matmul");
  for (size_t i = 0; i < count; ++i)
    ASSERT_EQ(c[i], expect[i]) << "n=" << n << " at " << i;
}

TEST(PtxsimApps, MatmulTiledSharedMemoryAndBarriers) {
  UBT_REQUIRE_APP_PTX();
  run_matmul(64);
}

TEST(PtxsimApps, MatmulPartialTiles) {
  UBT_REQUIRE_APP_PTX();
  run_matmul(37);
}

TEST(PtxsimApps, MatmulDebugBuild) {
  UBT_REQUIRE_APP_PTX();
  run_matmul(40, "matmul_G"); // nvcc -G: debug sections, no optimisation
}

int collatz_steps(unsigned x) {
  int steps = 0;
  while (x > 1 && steps < 1000) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    ++steps;
  }
  return steps;
}

class PtxsimMultiKernel : public testing::TestWithParam<std::string> {};

TEST_P(PtxsimMultiKernel, EveryKernel) {
  UBT_REQUIRE_APP_PTX();
  auto m = load_or_fail(app_ptx(GetParam()));
  ASSERT_TRUE(m);
  std::vector<std::string> names = m->kernels();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "_ZN11ubt_samples12scale_kernelIdEEvPT_S1_i",
                "_ZN11ubt_samples12scale_kernelIfEEvPT_S1_i",
                "_ZN11ubt_samples7collatzEPii", "early_exit", "fill_c"}));
  int n = 1000;
  Dim3 grid{(1000 + 127) / 128}, block{128};
  std::vector<int> ints(n + 32, 12345);
  int *pi = ints.data();
  int value = 5;
  void *fill[] = {&pi, &value, &n};
  auto r = m->launch("fill_c", grid, block, 0, fill);
  ASSERT_TRUE(r) << r.error();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(ints[i], 5 + i);
  EXPECT_EQ(ints[n], 12345);
  // early_exit: threads past n leave through `exit` under a nested-scope
  // predicate before touching memory.
  void *neg[] = {&pi, &n};
  r = m->launch("early_exit", grid, block, 0, neg);
  ASSERT_TRUE(r) << r.error();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(ints[i], -(5 + i));
  EXPECT_EQ(ints[n], 12345);

  std::vector<float> floats(n);
  std::vector<double> doubles(n);
  for (int i = 0; i < n; ++i) {
    floats[i] = static_cast<float>(i) * 0.1f;
    doubles[i] = static_cast<double>(i) * 0.7;
  }
  float *pf = floats.data();
  float ff = 2.5f;
  void *sf[] = {&pf, &ff, &n};
  r = m->launch("_ZN11ubt_samples12scale_kernelIfEEvPT_S1_i", grid, block, 0,
                sf);
  ASSERT_TRUE(r) << r.error();
  double *pd = doubles.data();
  double fd = 3.3;
  void *sd[] = {&pd, &fd, &n};
  r = m->launch("_ZN11ubt_samples12scale_kernelIdEEvPT_S1_i", grid, block, 0,
                sd);
  ASSERT_TRUE(r) << r.error();
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(floats[i], static_cast<float>(i) * 0.1f * 2.5f);
    ASSERT_EQ(doubles[i], static_cast<double>(i) * 0.7 * 3.3);
  }

  // collatz calls a non-inlined .func with a return value.
  void *cz[] = {&pi, &n};
  r = m->launch("_ZN11ubt_samples7collatzEPii", grid, block, 0, cz);
  ASSERT_TRUE(r) << r.error();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(ints[i], collatz_steps(static_cast<unsigned>(i + 1))) << i;
  EXPECT_EQ(ints[n], 12345);
}

INSTANTIATE_TEST_SUITE_P(Builds, PtxsimMultiKernel,
                         testing::Values("multi_kernel", "multi_kernel_G"));

struct Pair {
  int first;
  float second;
  short third;
};

TEST(PtxsimApps, ParamTypesStructByValue) {
  UBT_REQUIRE_APP_PTX();
  auto m = load_or_fail(app_ptx("param_types"));
  ASSERT_TRUE(m);
  std::string kernel = find_kernel(*m, "mixed_params");
  auto layout = m->params(kernel);
  ASSERT_TRUE(layout) << layout.error();
  ASSERT_EQ(layout->size(), 5u);
  uint32_t sizes[] = {4, 4, 8, 12, 8}, aligns[] = {4, 4, 8, 4, 8};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*layout)[i].size, sizes[i]) << i;
    EXPECT_EQ((*layout)[i].align, aligns[i]) << i;
  }
  int count = 70;
  float scale = 1.37f;
  std::vector<float> out(96, -1.0f);
  float *po = out.data();
  Pair pair{10, 0.25f, -3}; // a negative short: sign-extended from 16 bits
  long long offset = (1LL << 33) + 12345; // rounds in cvt.rn.f32.s64
  void *params[] = {&count, &scale, &po, &pair, &offset};
  auto r = m->launch(kernel, {2}, {48}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int i = 0; i < count; ++i) {
    float e = std::fmaf(static_cast<float>(pair.first + i), scale, pair.second);
    e = e + static_cast<float>(pair.third);
    e = e + static_cast<float>(offset);
    ASSERT_EQ(out[i], e) << i;
  }
  for (int i = count; i < 96; ++i)
    ASSERT_EQ(out[i], -1.0f);
}

TEST(PtxsimApps, LabelsByteLoadsAndLoops) {
  UBT_REQUIRE_APP_PTX();
  auto m = load_or_fail(app_ptx("labels"));
  ASSERT_TRUE(m);
  const int width = 16, count = 5;
  const char *text[count] = {"alpha", "beta", "gamma delta", "",
                             "xxxxxxxxxxxxxxx"};
  char host[count * width] = {};
  for (int i = 0; i < count; ++i)
    std::strncpy(host + i * width, text[i], width - 1);
  std::vector<int> lengths(count + 3, -1);
  char *pl = host;
  int w = width, c = count;
  int *plen = lengths.data();
  void *params[] = {&pl, &w, &plen, &c};
  auto r = m->launch("label_lengths", {1}, {32}, 0, params);
  ASSERT_TRUE(r) << r.error();
  for (int i = 0; i < count; ++i)
    EXPECT_EQ(lengths[i], static_cast<int>(std::strlen(text[i]))) << i;
  EXPECT_EQ(lengths[count], -1);
}

TEST(PtxsimApps, KernelLibTemplates) {
  UBT_REQUIRE_APP_PTX();
  auto m = load_or_fail(app_ptx("kernel_lib"));
  ASSERT_TRUE(m);
  int n = 300;
  std::vector<int> ints(n);
  std::vector<float> floats(n);
  for (int i = 0; i < n; ++i)
    floats[i] = static_cast<float>(i) * 0.25f - 7.0f;
  int *pi = ints.data();
  float *pf = floats.data();
  int one = 1;
  void *fill[] = {&pi, &one, &n};
  Dim3 grid{(300 + 127) / 128}, block{128};
  auto r = m->launch("lib_fill", grid, block, 0, fill);
  ASSERT_TRUE(r) << r.error();
  int three = 3;
  void *si[] = {&pi, &three, &n};
  r = m->launch(find_kernel(*m, "scaleIi"), grid, block, 0, si);
  ASSERT_TRUE(r) << r.error();
  float two = 2.0f;
  void *sf[] = {&pf, &two, &n};
  r = m->launch(find_kernel(*m, "scaleIf"), grid, block, 0, sf);
  ASSERT_TRUE(r) << r.error();
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(ints[i], 3);
    ASSERT_EQ(floats[i], (static_cast<float>(i) * 0.25f - 7.0f) * 2.0f);
  }
}

} // namespace
} // namespace ubtrace::ptxsim::test
