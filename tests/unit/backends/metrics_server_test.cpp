// The live endpoint's content negotiation (metrics_server.h): which
// exposition an Accept header gets, Prometheus's own header included.
#include "backends/metrics_server.h"

#include <gtest/gtest.h>

namespace ubtrace::backends {
namespace {

using output::Exposition;

TEST(MetricsNegotiation, PrometheusScrapesGetOpenMetrics) {
  // What Prometheus 2.x sends with each scrape.
  EXPECT_EQ(
      negotiate_exposition("application/openmetrics-text;version=1.0.0,"
                           "application/openmetrics-text;version=0.0.1;q=0.75,"
                           "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
      Exposition::OpenMetrics);
  EXPECT_EQ(negotiate_exposition("application/openmetrics-text"),
            Exposition::OpenMetrics);
  EXPECT_EQ(negotiate_exposition(" Application/OpenMetrics-Text ; q=0.9 "),
            Exposition::OpenMetrics);
}

TEST(MetricsNegotiation, EverythingElseGetsTheTextFormat) {
  EXPECT_EQ(negotiate_exposition(""), Exposition::Text);
  EXPECT_EQ(negotiate_exposition("*/*"), Exposition::Text);
  EXPECT_EQ(negotiate_exposition("text/plain"), Exposition::Text);
  // Weighed below the text format, or a version we do not write.
  EXPECT_EQ(negotiate_exposition("application/openmetrics-text;q=0.4,"
                                 "text/plain;q=0.5"),
            Exposition::Text);
  EXPECT_EQ(negotiate_exposition("application/openmetrics-text;version=0.0.1"),
            Exposition::Text);
  EXPECT_EQ(negotiate_exposition("application/openmetrics-text;q=0"),
            Exposition::Text);
  // A tie goes to the older, plainer format.
  EXPECT_EQ(negotiate_exposition("application/openmetrics-text,text/plain"),
            Exposition::Text);
}

} // namespace
} // namespace ubtrace::backends
