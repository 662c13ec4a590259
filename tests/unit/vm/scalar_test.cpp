// The verifier's number domain must be sound: whatever concrete values an
// abstract value stands for, the abstract result of an operation must
// contain the concrete result, and a refinement by a branch condition must
// keep every pair of values that satisfies it. Checked on many random
// abstract values and members of them.
#include "runtime/vm/verifier/scalar.h"

#include <gtest/gtest.h>
#include <random>

namespace ubtrace::vm::verifier {
namespace {

bool member(const Scalar &s, uint64_t v) {
  uint32_t lo = uint32_t(v);
  return s.umin <= v && v <= s.umax && s.smin <= int64_t(v) &&
         int64_t(v) <= s.smax && s.u32min <= lo && lo <= s.u32max &&
         s.s32min <= int32_t(lo) && int32_t(lo) <= s.s32max &&
         ((v ^ s.bits.value) & ~s.bits.mask) == 0;
}

class Gen {
public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  uint64_t interesting() {
    static const uint64_t values[] = {0,
                                      1,
                                      2,
                                      3,
                                      7,
                                      8,
                                      31,
                                      32,
                                      63,
                                      64,
                                      0x7f,
                                      0x80,
                                      0xff,
                                      0x100,
                                      0x7fff,
                                      0x8000,
                                      0xffff,
                                      0x7fffffff,
                                      0x80000000,
                                      0xffffffff,
                                      0x100000000,
                                      0x7fffffffffffffff,
                                      0x8000000000000000,
                                      ~0ull,
                                      ~1ull,
                                      ~7ull,
                                      0xffffffff80000000};
    switch (rng_() % 4) {
    case 0:
      return rng_();
    case 1:
      return rng_() >> (rng_() % 64);
    default:
      return values[rng_() % std::size(values)] + (rng_() % 3) - 1;
    }
  }

  Scalar scalar(int depth = 0) {
    Scalar s;
    switch (rng_() % (depth > 2 ? 5 : 7)) {
    case 0:
      s = Scalar::constant(interesting());
      break;
    case 1: {
      uint64_t a = interesting(), b = interesting();
      s = Scalar::unsigned_range(std::min(a, b), std::max(a, b));
      break;
    }
    case 2: {
      int64_t a = int64_t(interesting()), b = int64_t(interesting());
      s = Scalar::signed_range(std::min(a, b), std::max(a, b));
      break;
    }
    case 3:
      s = Scalar::unknown();
      break;
    case 4:
      s = Scalar::of_bytes(1 << (rng_() % 3));
      break;
    case 5:
      s = scalar_alu64(op(), scalar(depth + 1), scalar(depth + 1));
      break;
    default:
      s = scalar_alu32(op(), scalar(depth + 1), scalar(depth + 1));
      break;
    }
    if (rng_() % 3 == 0) { // a branch shaped it
      Scalar c = Scalar::constant(interesting()), copy = s;
      if (refine64(relation(), copy, c))
        s = copy;
    }
    return s;
  }

  // A value of s, if one is found.
  bool pick(const Scalar &s, uint64_t &out) {
    uint64_t candidates[] = {s.umin,
                             s.umax,
                             uint64_t(s.smin),
                             uint64_t(s.smax),
                             s.bits.value,
                             s.bits.value | s.bits.mask,
                             (s.umin & ~0xffffffffull) | s.u32min,
                             (s.umax & ~0xffffffffull) | s.u32max,
                             (rng_() & s.bits.mask) | s.bits.value,
                             s.umin + (s.umax - s.umin) / 2,
                             uint64_t(s.smin) +
                                 (uint64_t(s.smax) - uint64_t(s.smin)) / 2};
    size_t start = rng_() % std::size(candidates);
    for (size_t i = 0; i < std::size(candidates); ++i) {
      uint64_t v = candidates[(start + i) % std::size(candidates)];
      if (member(s, v)) {
        out = v;
        return true;
      }
    }
    for (int i = 0; i < 64; ++i) {
      uint64_t v = (rng_() & s.bits.mask) | s.bits.value;
      if (member(s, v)) {
        out = v;
        return true;
      }
    }
    return false;
  }

  AluOp op() { return AluOp(rng_() % 13); }
  Relation relation() { return Relation(rng_() % 12); }
  uint64_t next() { return rng_(); }

private:
  std::mt19937_64 rng_;
};

bool holds64(Relation rel, uint64_t a, uint64_t b) {
  switch (rel) {
  case Relation::Eq:
    return a == b;
  case Relation::Ne:
    return a != b;
  case Relation::Ugt:
    return a > b;
  case Relation::Uge:
    return a >= b;
  case Relation::Ult:
    return a < b;
  case Relation::Ule:
    return a <= b;
  case Relation::Sgt:
    return int64_t(a) > int64_t(b);
  case Relation::Sge:
    return int64_t(a) >= int64_t(b);
  case Relation::Slt:
    return int64_t(a) < int64_t(b);
  case Relation::Sle:
    return int64_t(a) <= int64_t(b);
  case Relation::Set:
    return (a & b) != 0;
  case Relation::NotSet:
    return (a & b) == 0;
  }
  return false;
}

bool holds32(Relation rel, uint64_t a, uint64_t b) {
  uint32_t x = uint32_t(a), y = uint32_t(b);
  bool is_signed = rel == Relation::Sgt || rel == Relation::Sge ||
                   rel == Relation::Slt || rel == Relation::Sle;
  return is_signed ? holds64(rel, uint64_t(int64_t(int32_t(x))),
                             uint64_t(int64_t(int32_t(y))))
                   : holds64(rel, x, y);
}

TEST(ScalarDomain, ConstantsAndRangesHoldTheirValues) {
  Gen gen(1);
  for (int i = 0; i < 20000; ++i) {
    uint64_t v = gen.interesting();
    EXPECT_TRUE(member(Scalar::constant(v), v));
    uint64_t w = gen.interesting();
    Scalar r = Scalar::unsigned_range(std::min(v, w), std::max(v, w));
    EXPECT_TRUE(member(r, v) && member(r, w)) << v << " " << w;
    Scalar s = Scalar::signed_range(std::min(int64_t(v), int64_t(w)),
                                    std::max(int64_t(v), int64_t(w)));
    EXPECT_TRUE(member(s, v) && member(s, w)) << v << " " << w;
  }
}

TEST(ScalarDomain, AluResultsContainTheConcreteResults) {
  Gen gen(2);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    Scalar a = gen.scalar(), b = gen.scalar();
    uint64_t x, y;
    if (!gen.pick(a, x) || !gen.pick(b, y))
      continue;
    AluOp op = gen.op();
    Scalar r64 = scalar_alu64(op, a, b);
    uint64_t c64 = eval_alu64(op, x, y);
    ASSERT_TRUE(member(r64, c64))
        << "op " << int(op) << " x=" << x << " y=" << y << " in "
        << a.describe() << " / " << b.describe() << " -> " << r64.describe();
    Scalar r32 = scalar_alu32(op, a, b);
    uint64_t c32 = eval_alu32(op, uint32_t(x), uint32_t(y));
    ASSERT_TRUE(member(r32, c32))
        << "op32 " << int(op) << " x=" << x << " y=" << y << " in "
        << a.describe() << " / " << b.describe() << " -> " << r32.describe();
    ++checked;
  }
  EXPECT_GT(checked, 100000);
}

TEST(ScalarDomain, ConversionsContainTheConcreteResults) {
  Gen gen(3);
  for (int i = 0; i < 100000; ++i) {
    Scalar a = gen.scalar();
    uint64_t x;
    if (!gen.pick(a, x))
      continue;
    for (int bytes : {1, 2, 4, 8}) {
      uint64_t t = bytes == 8 ? x : x & ((uint64_t(1) << (bytes * 8)) - 1);
      ASSERT_TRUE(member(a.truncated(bytes), t)) << x << " " << bytes;
      int shift = 64 - bytes * 8;
      uint64_t sx = uint64_t(int64_t(x << shift) >> shift);
      ASSERT_TRUE(member(a.sign_extended(bytes * 8), sx)) << x << " " << bytes;
    }
    ASSERT_TRUE(member(a.zext32(), uint32_t(x)));
    ASSERT_TRUE(member(a.sext32(), uint64_t(int64_t(int32_t(x)))));
    for (int bits : {16, 32, 64}) {
      uint64_t le = bits == 64 ? x : x & ((uint64_t(1) << bits) - 1);
      uint64_t swapped = bits == 16   ? __builtin_bswap16(uint16_t(x))
                         : bits == 32 ? __builtin_bswap32(uint32_t(x))
                                      : __builtin_bswap64(x);
      ASSERT_TRUE(member(scalar_endian(EndianOp::ToLe, bits, a), le));
      ASSERT_TRUE(member(scalar_endian(EndianOp::ToBe, bits, a), swapped));
    }
  }
}

TEST(ScalarDomain, RefinementKeepsEverySatisfyingPair) {
  Gen gen(4);
  int kept = 0, ruled_out = 0;
  for (int i = 0; i < 200000; ++i) {
    Scalar a = gen.scalar(), b = gen.next() % 2
                                     ? Scalar::constant(gen.interesting())
                                     : gen.scalar();
    uint64_t x, y;
    if (!gen.pick(a, x) || !gen.pick(b, y))
      continue;
    Relation rel = gen.relation();
    bool wide = gen.next() % 2;
    bool truth = wide ? holds64(rel, x, y) : holds32(rel, x, y);
    Scalar ra = a, rb = b;
    bool possible = wide ? refine64(rel, ra, rb) : refine32(rel, ra, rb);
    if (!truth) {
      ++ruled_out;
      continue;
    }
    ASSERT_TRUE(possible) << (wide ? "64" : "32") << " rel " << int(rel)
                          << " x=" << x << " y=" << y << " " << a.describe()
                          << " / " << b.describe();
    ASSERT_TRUE(member(ra, x) && member(rb, y))
        << (wide ? "64" : "32") << " rel " << int(rel) << " x=" << x
        << " y=" << y << " " << a.describe() << " / " << b.describe() << " -> "
        << ra.describe() << " / " << rb.describe();
    ++kept;
  }
  EXPECT_GT(kept, 50000);
  EXPECT_GT(ruled_out, 10000);
}

TEST(ScalarDomain, BranchesOnConstantsAreDecided) {
  // The loop-bounding case: a known counter against a constant.
  Scalar i = Scalar::constant(99), bound = Scalar::constant(100);
  Scalar a = i, b = bound;
  EXPECT_TRUE(refine64(Relation::Ult, a, b));
  a = i, b = bound;
  EXPECT_FALSE(refine64(Relation::Uge, a, b));
  // A range against a constant narrows it.
  a = Scalar::unsigned_range(0, 1000), b = Scalar::constant(64);
  ASSERT_TRUE(refine64(Relation::Ult, a, b));
  EXPECT_EQ(a.umax, 63u);
  a = Scalar::of_bytes(4), b = Scalar::constant(10);
  ASSERT_TRUE(refine32(Relation::Sle, a, b));
  EXPECT_EQ(a.s32max, 10);
}

} // namespace
} // namespace ubtrace::vm::verifier
