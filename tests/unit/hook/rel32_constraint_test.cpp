// The search for rel32 values with trap bytes at given positions, against
// a brute-force scan where gaps are small and property checks elsewhere.
#include "runtime/hook/rel32_constraint.h"
#include "runtime/hook/trap_bytes.h"

#include <gtest/gtest.h>
#include <random>

namespace ubtrace::runtime::hook {
namespace {

std::optional<int64_t> brute_above(Rel32Constraint c, int64_t r,
                                   int64_t limit) {
  for (int64_t x = r; x <= limit; ++x)
    if (c.satisfied_by(x))
      return x;
  return std::nullopt;
}

std::optional<int64_t> brute_below(Rel32Constraint c, int64_t r,
                                   int64_t limit) {
  for (int64_t x = r; x >= limit; --x)
    if (c.satisfied_by(x))
      return x;
  return std::nullopt;
}

TEST(HookRel32Constraint, SatisfiedBy) {
  Rel32Constraint c{0b1001}; // bytes 0 and 3
  EXPECT_TRUE(c.satisfied_by(0x06000006));
  EXPECT_TRUE(c.satisfied_by(static_cast<int32_t>(0xCC1234CC)));
  EXPECT_FALSE(c.satisfied_by(0x06000005));
  EXPECT_FALSE(c.satisfied_by(0x05000006));
  EXPECT_TRUE(Rel32Constraint{0}.satisfied_by(12345));
}

TEST(HookRel32Constraint, MatchesBruteForceOnLowBytes) {
  std::mt19937_64 rng(42);
  for (uint8_t mask : {1, 2, 3}) {
    Rel32Constraint c{mask};
    for (int i = 0; i < 300; ++i) {
      int64_t r = static_cast<int32_t>(rng());
      std::optional<int64_t> up = c.next_at_or_above(r);
      ASSERT_TRUE(up);
      EXPECT_EQ(up, brute_above(c, r, *up))
          << "mask " << int(mask) << " r " << r;
      std::optional<int64_t> down = c.next_at_or_below(r);
      ASSERT_TRUE(down);
      EXPECT_EQ(down, brute_below(c, r, *down))
          << "mask " << int(mask) << " r " << r;
    }
  }
}

TEST(HookRel32Constraint, HighBytesSatisfyAndAreTight) {
  std::mt19937_64 rng(7);
  for (uint8_t mask : {4, 8, 9, 12, 15}) {
    Rel32Constraint c{mask};
    for (int i = 0; i < 300; ++i) {
      int64_t r = static_cast<int32_t>(rng());
      std::optional<int64_t> up = c.next_at_or_above(r);
      ASSERT_TRUE(up);
      EXPECT_GE(*up, r);
      EXPECT_TRUE(c.satisfied_by(*up));
      // Tight: the step just below is either r or does not satisfy, and
      // searching from any point in [r, up] lands on up.
      if (*up > r) {
        EXPECT_FALSE(c.satisfied_by(*up - 1));
        for (int probe = 0; probe < 20; ++probe) {
          int64_t from = r + static_cast<int64_t>(rng() % (*up - r));
          EXPECT_EQ(c.next_at_or_above(from), up);
        }
      }
      std::optional<int64_t> down = c.next_at_or_below(r);
      ASSERT_TRUE(down);
      EXPECT_LE(*down, r);
      EXPECT_TRUE(c.satisfied_by(*down));
      if (*down < r)
        EXPECT_FALSE(c.satisfied_by(*down + 1));
    }
  }
}

TEST(HookRel32Constraint, AllFourBytesPinned) {
  Rel32Constraint c{0xF};
  std::optional<int64_t> v = c.next_at_or_above(0);
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 0x06060606);
  std::optional<int64_t> n = c.next_at_or_below(-1);
  ASSERT_TRUE(n);
  EXPECT_EQ(static_cast<uint32_t>(*n), 0xD5D5D5D5u); // largest negative one
}

} // namespace
} // namespace ubtrace::runtime::hook
