// tseries() buckets read back from memory the traced process can write:
// whatever it put there prints as numbers, never traps the CLI.
#include "backends/output/tseries.h"

#include <climits>
#include <cstring>
#include <gtest/gtest.h>

namespace ubtrace::output {
namespace {

runtime::MapSpec avg_spec() {
  runtime::MapSpec s;
  s.agg = runtime::AggKind::TSeries;
  s.tseries_agg = runtime::TSeriesAgg::Avg;
  s.tseries_intervals = 2;
  s.tseries_interval_ns = 1000000000;
  s.value.is_signed = true;
  s.value_size = 2 * sizeof(runtime::TSeriesBucket);
  return s;
}

TEST(TSeries, AvgOfAScribbledCountDoesNotTrap) {
  runtime::TSeriesBucket b[2] = {{INT64_MIN, UINT64_MAX, 7}, {-9, 3, 8}};
  Bytes bytes(reinterpret_cast<const uint8_t *>(b), sizeof b);
  auto got = tseries_intervals(avg_spec(), bytes);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(static_cast<int64_t>(got.at(7)), INT64_MIN); // not divided
  EXPECT_EQ(static_cast<int64_t>(got.at(8)), -3);
}

// The last interval number a target can write gives a window of n points,
// not a loop that never ends.
TEST(TSeries, WindowAtTheLastIntervalNumberEnds) {
  std::map<uint64_t, uint64_t> intervals = {{UINT64_MAX, 5}, {3, 1}};
  TimeSeries ts = build_tseries(avg_spec(), intervals, UINT64_MAX);
  ASSERT_EQ(ts.points.size(), 1u);
  EXPECT_EQ(ts.points[0].second, 5u);
}

} // namespace
} // namespace ubtrace::output
