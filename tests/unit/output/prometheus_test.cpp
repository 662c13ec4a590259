// Prometheus exposition (prometheus.h): names, label escaping, and each
// aggregation's family, from maps built as the CLI builds them.
#include "backends/output/prometheus.h"
#include "tests/unit/output/map_builder.h"

#include <gtest/gtest.h>

namespace ubtrace::output::test {
namespace {

using runtime::AggKind;

TEST(Prometheus, NamesAreSanitisedAndPrefixed) {
  EXPECT_EQ(prometheus_name("@lat_us"), "ubtrace_lat_us");
  EXPECT_EQ(prometheus_name("@"), "ubtrace_map");
  EXPECT_EQ(prometheus_name("@a.b-c", ""), "a_b_c");
  EXPECT_EQ(prometheus_name("@9lives", ""), "_9lives");
}

TEST(Prometheus, LabelValuesAreEscaped) {
  EXPECT_EQ(prometheus_escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(Prometheus, CountersGaugesAndSummaries) {
  MapBuilder calls(map_spec("@calls", AggKind::Count, int_type(8, false),
                            int_type(8, false)));
  calls.add(Packer().u64(7).bytes(), Packer().u64(3).bytes())
      .add(Packer().u64(9).bytes(), Packer().u64(5).bytes());
  MapBuilder lat(map_spec("@lat", AggKind::Avg, no_key(), int_type(8, true)));
  lat.add({}, pair_bytes(30, 2));
  PrintedMap c = calls.build(), l = lat.build();
  EXPECT_EQ(prometheus_text({&c, &l}),
            "# HELP ubtrace_calls_total ubtrace map @calls, count()\n"
            "# TYPE ubtrace_calls_total counter\n"
            "ubtrace_calls_total{key=\"7\"} 3\n"
            "ubtrace_calls_total{key=\"9\"} 5\n"
            "# HELP ubtrace_lat ubtrace map @lat, avg()\n"
            "# TYPE ubtrace_lat summary\n"
            "ubtrace_lat_sum 30\n"
            "ubtrace_lat_count 2\n"
            "# HELP ubtrace_lat_average ubtrace map @lat, avg()\n"
            "# TYPE ubtrace_lat_average gauge\n"
            "ubtrace_lat_average 15\n");
}

TEST(Prometheus, HistogramBucketsAreCumulative) {
  MapBuilder h(map_spec("@size", AggKind::Hist, no_key(), int_type(8, true)));
  h.spec().value_size = runtime::hist_buckets(0) * 8;
  // Values 0, 2 and 3: buckets [0] 1 and [2, 4) 2.
  std::vector<uint64_t> buckets(runtime::hist_buckets(0), 0);
  for (int64_t v : {0, 2, 3})
    buckets[hist_bucket(v, 0)]++;
  Packer p;
  for (uint64_t b : buckets)
    p.u64(b);
  h.add({}, p.bytes());
  PrintedMap m = h.build();
  std::string text = prometheus_text({&m});
  EXPECT_NE(text.find("# TYPE ubtrace_size histogram\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ubtrace_size_bucket{le=\"0\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ubtrace_size_bucket{le=\"3\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ubtrace_size_bucket{le=\"+Inf\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ubtrace_size_count 3\n"), std::string::npos) << text;
}

TEST(Prometheus, OpenMetricsNamesCounterFamiliesWithoutTotal) {
  MapBuilder calls(map_spec("@calls", AggKind::Count, int_type(8, false),
                            int_type(8, false)));
  calls.add(Packer().u64(7).bytes(), Packer().u64(3).bytes());
  calls.spec().help = "Calls \"by\" n\\m";
  PrintedMap c = calls.build();
  EXPECT_EQ(prometheus_text({&c}, Exposition::OpenMetrics),
            "# HELP ubtrace_calls Calls \\\"by\\\" n\\\\m\n"
            "# TYPE ubtrace_calls counter\n"
            "ubtrace_calls_total{key=\"7\"} 3\n"
            "# EOF\n");
  // The 0.0.4 text format: the family as its samples, quotes as they are.
  EXPECT_EQ(prometheus_text({&c}, Exposition::Text),
            "# HELP ubtrace_calls_total Calls \"by\" n\\\\m\n"
            "# TYPE ubtrace_calls_total counter\n"
            "ubtrace_calls_total{key=\"7\"} 3\n");
  // No maps: an OpenMetrics exposition is still one that ends.
  EXPECT_EQ(prometheus_text({}, Exposition::OpenMetrics), "# EOF\n");
}

TEST(Prometheus, AnnotatedLabelsNameTheKeyParts) {
  MapBuilder m(
      map_spec("@io", AggKind::Sum, int_type(8, false), int_type(8, true)));
  m.spec().labels = {"fd"};
  m.add(Packer().u64(3).bytes(), Packer().u64(10).bytes());
  PrintedMap p = m.build();
  EXPECT_NE(prometheus_text({&p}).find("ubtrace_io_total{fd=\"3\"} 10\n"),
            std::string::npos)
      << prometheus_text({&p});
}

TEST(Prometheus, SumsThatWentNegativeAreGauges) {
  MapBuilder m(map_spec("@delta", AggKind::Sum, no_key(), int_type(8, true)));
  m.add({}, Packer().u64(static_cast<uint64_t>(-4)).bytes());
  PrintedMap p = m.build();
  EXPECT_EQ(prometheus_text({&p}),
            "# HELP ubtrace_delta ubtrace map @delta, sum()\n"
            "# TYPE ubtrace_delta gauge\n"
            "ubtrace_delta -4\n");
}

} // namespace
} // namespace ubtrace::output::test
