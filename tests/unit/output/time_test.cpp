// time() and strftime() with bpftrace's extensions.
#include "backends/output/time_format.h"

#include <cstdlib>
#include <gtest/gtest.h>

namespace ubtrace::output::test {
namespace {

class TimeFormat : public ::testing::Test {
protected:
  void SetUp() override {
    const char *tz = std::getenv("TZ");
    saved_ = tz ? std::optional<std::string>(tz) : std::nullopt;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  std::optional<std::string> saved_;
};

// 2021-03-04T05:06:07Z
constexpr std::time_t kSecond = 1614834367;

TEST_F(TimeFormat, TimeUsesStrftime) {
  auto t = format_time("%H:%M:%S\n", kSecond);
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(*t, "05:06:07\n");
  auto d = format_time("%Y-%m-%d", kSecond);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, "2021-03-04");
}

TEST_F(TimeFormat, TimeFailsOnEmptyOrOverlongResults) {
  EXPECT_FALSE(format_time("", kSecond).ok());
  // 64 bytes is bpftrace's buffer; the result must fit with its NUL.
  EXPECT_FALSE(format_time(std::string(64, 'x'), kSecond).ok());
  auto fits = format_time(std::string(63, 'x'), kSecond);
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits->size(), 63u);
}

TEST_F(TimeFormat, StrftimeExtensions) {
  const int64_t ns = int64_t{kSecond} * 1000000000 + 123456789;
  EXPECT_EQ(format_strftime("%H:%M:%S.%f", ns), "05:06:07.123456");
  EXPECT_EQ(format_strftime("%s.%k", ns), "1614834367.123456789");
  EXPECT_EQ(format_strftime("%l ms", ns), "123 ms");
  EXPECT_EQ(format_strftime("%f%f", ns), "123456123456");
  // bpftrace's strftime_microsecond_extension_rollover: 1000123000 ns
  // since some second is one second and 123 microseconds later.
  EXPECT_EQ(
      format_strftime("%s.%f", int64_t{kSecond} * 1000000000 + 1000123000),
      "1614834368.000123");
  EXPECT_EQ(format_strftime("%m/%d/%y", ns), "03/04/21");
}

TEST_F(TimeFormat, StrftimeFailuresPrintQuestionMark) {
  EXPECT_EQ(format_strftime("%H", 999999999), "(?)"); // second 0
  EXPECT_EQ(format_strftime("", int64_t{kSecond} * 1000000000), "(?)");
  EXPECT_EQ(format_strftime("%Y-%m-%d", int64_t{kSecond} * 1000000000, 10),
            "(?)");
  EXPECT_EQ(format_strftime("%Y-%m-%d", int64_t{kSecond} * 1000000000, 11),
            "2021-03-04");
}

TEST_F(TimeFormat, StrftimeLocalTimeAndUtc) {
  setenv("TZ", "EST5", 1);
  tzset();
  const int64_t ns = int64_t{kSecond} * 1000000000;
  EXPECT_EQ(format_strftime("%H", ns), "00");
  EXPECT_EQ(format_strftime("%H", ns, 1024, true), "05");
}

} // namespace
} // namespace ubtrace::output::test
