// Merging per-slot values into one, per aggregation.
#include "backends/output/merge.h"
#include "tests/unit/output/map_builder.h"

#include <gtest/gtest.h>

namespace ubtrace::output::test {
namespace {

using runtime::AggKind;

std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto &p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

runtime::MapSpec spec_of(AggKind agg, uint32_t value_size, bool is_signed) {
  auto s = map_spec("@m", agg, i64(), int_type(8, is_signed));
  s.value_size = value_size;
  return s;
}

TEST(Merge, CountAndSumAdd) {
  auto slots = concat({le64(3), le64(4), le64(0), le64(10)});
  EXPECT_EQ(merge_slots(spec_of(AggKind::Count, 8, false), slots, 4), le64(17));
  auto signed_slots = concat({le64(static_cast<uint64_t>(-5)), le64(2)});
  EXPECT_EQ(merge_slots(spec_of(AggKind::Sum, 8, true), signed_slots, 2),
            le64(static_cast<uint64_t>(-3)));
  // One slot: unchanged.
  EXPECT_EQ(merge_slots(spec_of(AggKind::Count, 8, false), le64(9), 1),
            le64(9));
}

TEST(Merge, MinMaxOverSetSlotsOnly) {
  auto slots = concat(
      {pair_bytes(1, 0), pair_bytes(7, 1), pair_bytes(4, 1), pair_bytes(0, 0)});
  EXPECT_EQ(merge_slots(spec_of(AggKind::Min, 16, true), slots, 4),
            pair_bytes(4, 1));
  EXPECT_EQ(merge_slots(spec_of(AggKind::Max, 16, true), slots, 4),
            pair_bytes(7, 1));
  auto none_set = concat({pair_bytes(5, 0), pair_bytes(6, 0)});
  EXPECT_EQ(merge_slots(spec_of(AggKind::Min, 16, true), none_set, 2),
            pair_bytes(0, 0));
  // Signedness decides what "least" means.
  auto mixed =
      concat({pair_bytes(static_cast<uint64_t>(-1), 1), pair_bytes(5, 1)});
  EXPECT_EQ(merge_slots(spec_of(AggKind::Min, 16, true), mixed, 2),
            pair_bytes(static_cast<uint64_t>(-1), 1));
  EXPECT_EQ(merge_slots(spec_of(AggKind::Min, 16, false), mixed, 2),
            pair_bytes(5, 1));
  EXPECT_EQ(merge_slots(spec_of(AggKind::Max, 16, false), mixed, 2),
            pair_bytes(static_cast<uint64_t>(-1), 1));
}

TEST(Merge, AvgAndStatsAddTotalsAndCounts) {
  auto slots = concat({pair_bytes(10, 1), pair_bytes(50, 3),
                       pair_bytes(static_cast<uint64_t>(-4), 1)});
  EXPECT_EQ(merge_slots(spec_of(AggKind::Avg, 16, true), slots, 3),
            pair_bytes(56, 5));
  EXPECT_EQ(merge_slots(spec_of(AggKind::Stats, 16, true), slots, 3),
            pair_bytes(56, 5));
}

TEST(Merge, HistogramsAddBucketwise) {
  const uint32_t n = runtime::lhist_buckets(0, 10, 2);
  std::vector<uint64_t> a(n, 0), b(n, 0), sum(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = i;
    b[i] = 2 * i + 1;
    sum[i] = 3 * i + 1;
  }
  auto s = spec_of(AggKind::LHist, n * 8, true);
  EXPECT_EQ(merge_slots(s, concat({buckets_bytes(a), buckets_bytes(b)}), 2),
            buckets_bytes(sum));
  s.agg = AggKind::Hist;
  EXPECT_EQ(merge_slots(s, concat({buckets_bytes(a), buckets_bytes(b)}), 2),
            buckets_bytes(sum));
}

TEST(Merge, PlainValuesTakeTheFirstSlot) {
  auto s = map_spec("@m", AggKind::None, i64(), string_type(4));
  auto slots = concat({str_bytes("abc", 4), str_bytes("xyz", 4)});
  EXPECT_EQ(merge_slots(s, slots, 2), str_bytes("abc", 4));
}

TEST(Merge, MergedValuesPrint) {
  // Slots merged, then printed: the path the CLI takes at exit.
  auto s = spec_of(AggKind::Avg, 16, true);
  auto merged =
      merge_slots(s, concat({pair_bytes(10, 1), pair_bytes(20, 1)}), 2);
  MapBuilder m(s);
  m.add(le64(1), merged);
  PrintedMap pm = m.build();
  ASSERT_EQ(pm.entries.size(), 1u);
  EXPECT_EQ(pm.entries[0].value.sint, 15);
}

} // namespace
} // namespace ubtrace::output::test
