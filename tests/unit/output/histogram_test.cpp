// hist() and lhist(): which buckets print, labels, bars, JSON.
#include "backends/output/histogram.h"
#include "tests/unit/output/helpers.h"

#include <gtest/gtest.h>

namespace ubtrace::output::test {
namespace {

std::vector<uint64_t> hist_of(std::initializer_list<int64_t> values,
                              uint32_t bits = 0) {
  std::vector<uint64_t> b(runtime::hist_buckets(bits), 0);
  for (int64_t v : values)
    b.at(hist_bucket(v, bits))++;
  return b;
}

std::vector<uint64_t> lhist_of(std::initializer_list<int64_t> values,
                               int64_t min, int64_t max, int64_t step) {
  std::vector<uint64_t> b(runtime::lhist_buckets(min, max, step), 0);
  for (int64_t v : values)
    b.at(lhist_bucket(v, min, max, step))++;
  return b;
}

std::string bar(int n) {
  return std::string(n, '@') + std::string(52 - n, ' ');
}

TEST(Histogram, BucketHelperMatchesTheLabels) {
  // Sanity of the test's own bucket function against bpftrace's examples.
  EXPECT_EQ(hist_bucket(-1, 0), 0u);
  EXPECT_EQ(hist_bucket(0, 0), 1u);
  EXPECT_EQ(hist_bucket(1, 0), 2u);
  EXPECT_EQ(hist_bucket(3, 0), 3u);
  EXPECT_EQ(hist_bucket(1024, 0), 12u);
  EXPECT_EQ(hist_bucket(15, 3), 16u);
  EXPECT_EQ(hist_bucket(16, 3), 17u);
  EXPECT_EQ(hist_bucket(INT64_MAX, 0), 64u);
}

TEST(Histogram, TextMatchesBpftraceExample) {
  // bpftrace's tests/runtime/outputs/hist.txt for hist(-1, 2, 3, 7, 20).
  Histogram h = build_hist(hist_of({-1, 2, 3, 7, 20}), 0);
  EXPECT_EQ(hist_text(h), "(..., 0)               1 |" + bar(26) +
                              "|\n"
                              "[0]                    0 |" +
                              bar(0) +
                              "|\n"
                              "[1]                    0 |" +
                              bar(0) +
                              "|\n"
                              "[2, 4)                 2 |" +
                              bar(52) +
                              "|\n"
                              "[4, 8)                 1 |" +
                              bar(26) +
                              "|\n"
                              "[8, 16)                0 |" +
                              bar(0) +
                              "|\n"
                              "[16, 32)               1 |" +
                              bar(26) + "|\n");
}

TEST(Histogram, OnlyBucketsBetweenFirstAndLastNonEmpty) {
  Histogram h = build_hist(hist_of({3, 20}), 0);
  EXPECT_EQ(hist_text(h), "[2, 4)                 1 |" + bar(52) +
                              "|\n"
                              "[4, 8)                 0 |" +
                              bar(0) +
                              "|\n"
                              "[8, 16)                0 |" +
                              bar(0) +
                              "|\n"
                              "[16, 32)               1 |" +
                              bar(52) + "|\n");
  EXPECT_EQ(hist_json(h), "[{\"min\": 2, \"max\": 3, \"count\": 1},"
                          "{\"min\": 4, \"max\": 7, \"count\": 0},"
                          "{\"min\": 8, \"max\": 15, \"count\": 0},"
                          "{\"min\": 16, \"max\": 31, \"count\": 1}]");
}

TEST(Histogram, EmptyHistogramPrintsNoLines) {
  Histogram h = build_hist(hist_of({}), 0);
  EXPECT_EQ(hist_text(h), "");
  EXPECT_EQ(hist_json(h), "[]");
}

TEST(Histogram, ZeroAndNegativeBuckets) {
  Histogram h = build_hist(hist_of({0, 0, -5}), 0);
  EXPECT_EQ(hist_text(h), "(..., 0)               1 |" + bar(26) +
                              "|\n"
                              "[0]                    2 |" +
                              bar(52) + "|\n");
  EXPECT_EQ(hist_json(h), "[{\"max\": -1, \"count\": 1},"
                          "{\"min\": 0, \"max\": 0, \"count\": 2}]");
  h = build_hist(hist_of({1}), 0);
  EXPECT_EQ(hist_text(h), "[1]                    1 |" + bar(52) + "|\n");
}

TEST(Histogram, SuffixedLabels) {
  Histogram h = build_hist(hist_of({1000000, 1 << 30}), 0);
  std::string text = hist_text(h);
  EXPECT_EQ(text.substr(0, 26), "[512K, 1M)             1 |");
  EXPECT_NE(text.find("[1G, 2G)               1 |"), std::string::npos);
  EXPECT_NE(text.find("[1M, 2M)               0 |"), std::string::npos);
  // hist(10G) as bpftrace's hist_10g.json.
  h = build_hist(hist_of({10ll * 1024 * 1024 * 1024}), 0);
  EXPECT_EQ(hist_text(h), "[8G, 16G)              1 |" + bar(52) + "|\n");
  EXPECT_EQ(hist_json(h),
            "[{\"min\": 8589934592, \"max\": 17179869183, \"count\": 1}]");
}

TEST(Histogram, HugeValuesReachTheExabyteBuckets) {
  std::vector<uint64_t> b(runtime::hist_buckets(0), 0);
  b[64] = 1; // [4E, 8E): values with bit 62 as the leading one
  b[65] = 3; // [8E, 16E): bit 63
  Histogram h = build_hist(b, 0);
  EXPECT_EQ(hist_text(h), "[4E, 8E)               1 |" + bar(17) +
                              "|\n"
                              "[8E, 16E)              3 |" +
                              bar(52) + "|\n");
  // The top bound is 2^64 - 1, which JSON writes as a string.
  EXPECT_EQ(hist_json(h), "[{\"min\": 4611686018427387904, \"max\": "
                          "\"9223372036854775807\", \"count\": 1},"
                          "{\"min\": 9223372036854775808, \"max\": "
                          "\"18446744073709551615\", \"count\": 3}]");
}

TEST(Histogram, FinerBucketsWithBits) {
  // hist(n, 3): single values up to 15, then 8 buckets per power of two,
  // as bpftrace's hist_2args.json.
  std::vector<int64_t> values;
  for (int64_t i = 0; i < 40; ++i)
    values.push_back(i);
  std::vector<uint64_t> b(runtime::hist_buckets(3), 0);
  for (int64_t v : values)
    b.at(hist_bucket(v, 3))++;
  Histogram h = build_hist(b, 3);
  std::string json = hist_json(h);
  EXPECT_EQ(json.rfind("[{\"min\": 0, \"max\": 0, \"count\": 1},", 0), 0u);
  EXPECT_NE(json.find("{\"min\": 15, \"max\": 15, \"count\": 1},"
                      "{\"min\": 16, \"max\": 17, \"count\": 2}"),
            std::string::npos);
  EXPECT_NE(json.find("{\"min\": 32, \"max\": 35, \"count\": 4},"
                      "{\"min\": 36, \"max\": 39, \"count\": 4}]"),
            std::string::npos);
  std::string text = hist_text(h);
  EXPECT_NE(text.find("[15]                   1 |"), std::string::npos);
  EXPECT_NE(text.find("[16, 18)               2 |"), std::string::npos);
  EXPECT_NE(text.find("[36, 40)               4 |"), std::string::npos);

  // Large values with bits: the suffix picks the largest power of 1024.
  std::vector<uint64_t> big(runtime::hist_buckets(2), 0);
  big.at(hist_bucket(5000, 2)) = 1; // [4K, 5K)
  h = build_hist(big, 2);
  EXPECT_EQ(hist_text(h), "[4K, 5K)               1 |" + bar(52) + "|\n");
  EXPECT_EQ(hist_json(h), "[{\"min\": 4096, \"max\": 5119, \"count\": 1}]");
}

TEST(Histogram, DivisionDividesCounts) {
  Histogram h = build_hist(hist_of({1, 1, 1, 1, 4, 4}), 0, 2);
  EXPECT_EQ(hist_text(h), "[1]                    2 |" + bar(52) +
                              "|\n"
                              "[2, 4)                 0 |" +
                              bar(0) +
                              "|\n"
                              "[4, 8)                 1 |" +
                              bar(26) + "|\n");
  // Counts all divided down to zero: no bars rather than a crash.
  h = build_hist(hist_of({1}), 0, 10);
  EXPECT_EQ(hist_text(h), "[1]                    0 |" + bar(0) + "|\n");
}

TEST(Histogram, BarsAreTruncatedSinglePrecisionScaling) {
  std::vector<uint64_t> b(runtime::hist_buckets(0), 0);
  b[1] = 3;
  b[2] = 1;
  b[3] = 2;
  Histogram h = build_hist(b, 0);
  // 1/3 * 52 = 17.33 -> 17, 2/3 * 52 = 34.67 -> 34.
  EXPECT_EQ(hist_text(h), "[0]                    3 |" + bar(52) +
                              "|\n"
                              "[1]                    1 |" +
                              bar(17) +
                              "|\n"
                              "[2, 4)                 2 |" +
                              bar(34) + "|\n");
}

TEST(Histogram, LinearMatchesBpftraceExample) {
  // bpftrace's tests/runtime/outputs/lhist.txt.
  Histogram h = build_lhist(lhist_of({2, 3, 7, -1, 11}, 0, 10, 2), 0, 10, 2);
  EXPECT_EQ(hist_text(h), "(..., 0)               1 |" + bar(26) +
                              "|\n"
                              "[0, 2)                 0 |" +
                              bar(0) +
                              "|\n"
                              "[2, 4)                 2 |" +
                              bar(52) +
                              "|\n"
                              "[4, 6)                 0 |" +
                              bar(0) +
                              "|\n"
                              "[6, 8)                 1 |" +
                              bar(26) +
                              "|\n"
                              "[8, 10)                0 |" +
                              bar(0) +
                              "|\n"
                              "[10, ...)              1 |" +
                              bar(26) + "|\n");
}

TEST(Histogram, LinearJsonAsBpftrace) {
  // bpftrace's lhist.json: lhist(2), lhist(50), lhist(1000) over 0..100/10.
  Histogram h = build_lhist(lhist_of({2, 50, 1000}, 0, 100, 10), 0, 100, 10);
  std::string json = hist_json(h);
  EXPECT_EQ(json.rfind("[{\"min\": 0, \"max\": 9, \"count\": 1},", 0), 0u);
  EXPECT_NE(json.find("{\"min\": 50, \"max\": 59, \"count\": 1}"),
            std::string::npos);
  EXPECT_TRUE(json.ends_with(",{\"min\": 100, \"count\": 1}]")) << json;
}

TEST(Histogram, LinearSuffixesOnlyForStepsOfWholeKilobytes) {
  // bpftrace's lhist_suffix and lhist_no_suffix tests.
  std::vector<uint64_t> b = {0, 1, 1, 1, 1, 1, 0};
  Histogram h = build_lhist(b, 0, 5 * 1024, 1024);
  EXPECT_EQ(hist_text(h), "[0, 1K)                1 |" + bar(52) +
                              "|\n"
                              "[1K, 2K)               1 |" +
                              bar(52) +
                              "|\n"
                              "[2K, 3K)               1 |" +
                              bar(52) +
                              "|\n"
                              "[3K, 4K)               1 |" +
                              bar(52) +
                              "|\n"
                              "[4K, 5K)               1 |" +
                              bar(52) + "|\n");
  b = {0, 1, 1, 1, 1, 1, 1, 0};
  h = build_lhist(b, 610000, 670000, 10000);
  EXPECT_EQ(hist_text(h).substr(0, 26), "[610000, 620000)       1 |");
  EXPECT_NE(hist_text(h).find("[640000, 650000)       1 |"), std::string::npos);
  // Megabyte steps and negative bounds.
  b.assign(runtime::lhist_buckets(-2 << 20, 2 << 20, 1 << 20), 0);
  b[1] = 1;
  b[4] = 2;
  h = build_lhist(b, -2 << 20, 2 << 20, 1 << 20);
  EXPECT_EQ(hist_text(h), "[-2M, -1M)             1 |" + bar(26) +
                              "|\n"
                              "[-1M, 0)               0 |" +
                              bar(0) +
                              "|\n"
                              "[0, 1M)                0 |" +
                              bar(0) +
                              "|\n"
                              "[1M, 2M)               2 |" +
                              bar(52) + "|\n");
  EXPECT_EQ(hist_json(h).rfind(
                "[{\"min\": -2097152, \"max\": -1048577, \"count\": 1},", 0),
            0u);
}

TEST(Histogram, LinearOverflowAndUnderflowOnly) {
  std::vector<uint64_t> b(12, 0);
  b[11] = 1;
  EXPECT_EQ(hist_text(build_lhist(b, 0, 100, 10)),
            "[100, ...)             1 |" + bar(52) + "|\n");
  b.assign(12, 0);
  b[0] = 1;
  EXPECT_EQ(hist_text(build_lhist(b, 10, 110, 10)),
            "(..., 10)              1 |" + bar(52) + "|\n");
}

TEST(Histogram, LinearStepOfOneShowsSingleValues) {
  Histogram h = build_lhist(lhist_of({3, 4, 4}, 0, 5, 1), 0, 5, 1);
  EXPECT_EQ(hist_text(h), "[3]                    1 |" + bar(26) +
                              "|\n"
                              "[4]                    2 |" +
                              bar(52) + "|\n");
  // The value at max lands in the open-ended last bucket.
  h = build_lhist(lhist_of({5}, 0, 5, 1), 0, 5, 1);
  EXPECT_EQ(hist_text(h), "[5, ...)               1 |" + bar(52) + "|\n");
}

TEST(Histogram, LongLabelsPushTheCountRight) {
  std::vector<uint64_t> b(runtime::lhist_buckets(0, 3000000000, 1000000000), 0);
  b[2] = 7;
  Histogram h = build_lhist(b, 0, 3000000000, 1000000000);
  EXPECT_EQ(hist_text(h),
            "[1000000000, 2000000000)       7 |" + bar(52) + "|\n");
}

} // namespace
} // namespace ubtrace::output::test
