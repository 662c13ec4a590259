#include "runtime/vm/verifier/scalar.h"

#include <algorithm>
#include <cstdio>

namespace ubtrace::vm::verifier {
namespace {

constexpr uint64_t kSign64 = uint64_t(1) << 63;
constexpr uint32_t kSign32 = uint32_t(1) << 31;
constexpr uint64_t kLow32 = 0xffffffffu;
constexpr int64_t kS32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kS32Max = std::numeric_limits<int32_t>::max();

template <class T> void raise_min(T &v, T x) {
  v = std::max(v, x);
}
template <class T> void lower_max(T &v, T x) {
  v = std::min(v, x);
}

bool empty(const Scalar &s) {
  return s.umin > s.umax || s.smin > s.smax || s.u32min > s.u32max ||
         s.s32min > s.s32max;
}

// One round of "every view tightens every other one"; false when empty.
bool tighten(Scalar &s) {
  // Known bits bound the 64-bit ranges...
  raise_min(s.umin, s.bits.min());
  lower_max(s.umax, s.bits.max());
  if (s.bits.mask & kSign64) {
    raise_min(s.smin, int64_t(s.bits.value | kSign64));
    lower_max(s.smax, int64_t(s.bits.max() & ~kSign64));
  } else {
    raise_min(s.smin, int64_t(s.bits.min()));
    lower_max(s.smax, int64_t(s.bits.max()));
  }
  // ...and the 32-bit ones.
  Tnum lo = s.bits.low32();
  raise_min(s.u32min, uint32_t(lo.min()));
  lower_max(s.u32max, uint32_t(lo.max()));
  if (lo.mask & kSign32) {
    raise_min(s.s32min, int32_t(uint32_t(lo.value) | kSign32));
    lower_max(s.s32max, int32_t(uint32_t(lo.max()) & ~kSign32));
  } else {
    raise_min(s.s32min, int32_t(uint32_t(lo.min())));
    lower_max(s.s32max, int32_t(uint32_t(lo.max())));
  }
  if (empty(s))
    return false;
  // Signed and unsigned views agree where a range stays in one sign half.
  if (int64_t(s.umin) <= int64_t(s.umax)) {
    raise_min(s.smin, int64_t(s.umin));
    lower_max(s.smax, int64_t(s.umax));
  }
  if (s.smin >= 0 || s.smax < 0) {
    raise_min(s.umin, uint64_t(s.smin));
    lower_max(s.umax, uint64_t(s.smax));
  }
  if (int32_t(s.u32min) <= int32_t(s.u32max)) {
    raise_min(s.s32min, int32_t(s.u32min));
    lower_max(s.s32max, int32_t(s.u32max));
  }
  if (s.s32min >= 0 || s.s32max < 0) {
    raise_min(s.u32min, uint32_t(s.s32min));
    lower_max(s.u32max, uint32_t(s.s32max));
  }
  if (empty(s))
    return false;
  // The 64-bit ranges bound the low half when its upper half is fixed.
  if ((s.umin >> 32) == (s.umax >> 32)) {
    raise_min(s.u32min, uint32_t(s.umin));
    lower_max(s.u32max, uint32_t(s.umax));
  }
  if (s.smin >= kS32Min && s.smax <= kS32Max) {
    raise_min(s.s32min, int32_t(s.smin));
    lower_max(s.s32max, int32_t(s.smax));
  } else if ((s.smin >> 32) == (s.smax >> 32) &&
             int32_t(s.smin) <= int32_t(s.smax)) {
    raise_min(s.s32min, int32_t(s.smin));
    lower_max(s.s32max, int32_t(s.smax));
  }
  if (empty(s))
    return false;
  // ...and the low half bounds the full value when the upper half is fixed.
  if ((s.umin >> 32) == (s.umax >> 32)) {
    uint64_t hi = s.umin & ~kLow32;
    raise_min(s.umin, hi | s.u32min);
    lower_max(s.umax, hi | s.u32max);
  }
  if (empty(s))
    return false;
  // Ranges back into known bits.
  Tnum r64 = Tnum::range(s.umin, s.umax);
  if (!s.bits.overlaps(r64))
    return false;
  s.bits = s.bits.intersect(r64);
  Tnum r32 = Tnum::range(s.u32min, s.u32max);
  lo = s.bits.low32();
  if (!lo.overlaps(r32))
    return false;
  s.bits = s.bits.with_low32(lo.intersect(r32));
  return true;
}

bool add_overflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_add_overflow(a, b, out);
}

// The smallest signed interval holding the four corner products, if none
// overflows.
bool signed_mul_bounds(const Scalar &a, const Scalar &b, int64_t *lo,
                       int64_t *hi) {
  int64_t corners[4];
  if (__builtin_mul_overflow(a.smin, b.smin, &corners[0]) ||
      __builtin_mul_overflow(a.smin, b.smax, &corners[1]) ||
      __builtin_mul_overflow(a.smax, b.smin, &corners[2]) ||
      __builtin_mul_overflow(a.smax, b.smax, &corners[3]))
    return false;
  *lo = *std::min_element(corners, corners + 4);
  *hi = *std::max_element(corners, corners + 4);
  return true;
}

Scalar shift64(AluOp op, const Scalar &a, const Scalar &b) {
  Scalar r;
  if (b.is_const()) {
    unsigned k = unsigned(b.value() & 63);
    if (op == AluOp::Lsh) {
      r.bits = tnum_lsh(a.bits, k);
      if (k == 0 || (a.umax >> (64 - k)) == 0) {
        r.umin = a.umin << k;
        r.umax = a.umax << k;
      }
    } else if (op == AluOp::Rsh) {
      r.bits = tnum_rsh(a.bits, k);
      r.umin = a.umin >> k;
      r.umax = a.umax >> k;
    } else {
      r.bits = tnum_arsh(a.bits, k);
      r.smin = a.smin >> k;
      r.smax = a.smax >> k;
    }
    r.normalize();
    return r;
  }
  if (b.umax >= 64) // the amount wraps modulo 64: anything goes
    return op == AluOp::Rsh ? Scalar::unsigned_range(0, a.umax) : r;
  unsigned lo = unsigned(b.umin), hi = unsigned(b.umax);
  if (op == AluOp::Lsh) {
    if (hi == 0 || (a.umax >> (64 - hi)) == 0) {
      r.umin = a.umin << lo;
      r.umax = a.umax << hi;
    }
  } else if (op == AluOp::Rsh) {
    r.umin = a.umin >> hi;
    r.umax = a.umax >> lo;
  } else {
    r.smin = std::min(a.smin >> lo, a.smin >> hi);
    r.smax = std::max(a.smax >> lo, a.smax >> hi);
  }
  r.normalize();
  return r;
}

} // namespace

Scalar Scalar::constant(uint64_t v) {
  Scalar s;
  s.bits = Tnum::constant(v);
  s.umin = s.umax = v;
  s.smin = s.smax = int64_t(v);
  s.u32min = s.u32max = uint32_t(v);
  s.s32min = s.s32max = int32_t(uint32_t(v));
  return s;
}

Scalar Scalar::unsigned_range(uint64_t min, uint64_t max) {
  Scalar s;
  s.umin = min;
  s.umax = max;
  s.normalize();
  return s;
}

Scalar Scalar::signed_range(int64_t min, int64_t max) {
  Scalar s;
  s.smin = min;
  s.smax = max;
  s.normalize();
  return s;
}

Scalar Scalar::of_bytes(int bytes) {
  if (bytes >= 8)
    return unknown();
  return unsigned_range(0, (uint64_t(1) << (bytes * 8)) - 1);
}

bool Scalar::normalize() {
  if (bits.is_const()) { // the common case, and a cheap one
    uint64_t v = bits.value;
    Scalar c = constant(v);
    bool fits = umin <= v && v <= umax && smin <= int64_t(v) &&
                int64_t(v) <= smax && u32min <= uint32_t(v) &&
                uint32_t(v) <= u32max && s32min <= int32_t(uint32_t(v)) &&
                int32_t(uint32_t(v)) <= s32max;
    *this = c;
    return fits;
  }
  for (int round = 0; round < 4; ++round) {
    Scalar before = *this;
    if (empty(*this) || !tighten(*this))
      return false;
    if (*this == before)
      break;
  }
  return !empty(*this);
}

bool Scalar::contains(const Scalar &o) const {
  return umin <= o.umin && o.umax <= umax && smin <= o.smin && o.smax <= smax &&
         u32min <= o.u32min && o.u32max <= u32max && s32min <= o.s32min &&
         o.s32max <= s32max && bits.contains(o.bits);
}

bool Scalar::intersect(const Scalar &o) {
  if (!bits.overlaps(o.bits))
    return false;
  bits = bits.intersect(o.bits);
  raise_min(umin, o.umin);
  lower_max(umax, o.umax);
  raise_min(smin, o.smin);
  lower_max(smax, o.smax);
  raise_min(u32min, o.u32min);
  lower_max(u32max, o.u32max);
  raise_min(s32min, o.s32min);
  lower_max(s32max, o.s32max);
  return normalize();
}

Scalar Scalar::zext32() const {
  Scalar s;
  s.bits = bits.low32();
  s.u32min = u32min;
  s.u32max = u32max;
  s.s32min = s32min;
  s.s32max = s32max;
  s.umin = u32min;
  s.umax = u32max;
  s.normalize();
  return s;
}

Scalar Scalar::sext32() const {
  Scalar s;
  s.bits = bits.low32().sign_extend(32);
  s.u32min = u32min;
  s.u32max = u32max;
  s.s32min = s32min;
  s.s32max = s32max;
  s.smin = s32min;
  s.smax = s32max;
  s.normalize();
  return s;
}

Scalar Scalar::truncated(int bytes) const {
  if (bytes >= 8)
    return *this;
  if (bytes == 4)
    return zext32();
  unsigned width = unsigned(bytes) * 8;
  uint64_t keep = (uint64_t(1) << width) - 1;
  Scalar s;
  s.bits = bits.truncate(bytes);
  s.umax = keep;
  if ((umin >> width) == (umax >> width)) {
    s.umin = umin & keep;
    s.umax = umax & keep;
  }
  s.normalize();
  return s;
}

Scalar Scalar::sign_extended(int width) const {
  if (width >= 64)
    return *this;
  if (is_const()) {
    int shift = 64 - width;
    return constant(uint64_t(int64_t(value() << shift) >> shift));
  }
  Scalar t = truncated(width / 8);
  uint64_t half = uint64_t(1) << (width - 1);
  if (t.umax < half) // non-negative: sign extension changes nothing
    return t;
  Scalar s;
  s.bits = t.bits.sign_extend(width);
  int64_t span = int64_t(uint64_t(1) << width);
  if (t.umin >= half) { // all negative
    s.smin = int64_t(t.umin) - span;
    s.smax = int64_t(t.umax) - span;
  } else {
    s.smin = -int64_t(half);
    s.smax = int64_t(half) - 1;
  }
  s.normalize();
  return s;
}

std::string Scalar::describe() const {
  char buf[160];
  if (is_const()) {
    snprintf(buf, sizeof(buf), "scalar %lld", (long long)value());
  } else if (is_unknown() ||
             (umin == 0 && umax == std::numeric_limits<uint64_t>::max() &&
              smin == std::numeric_limits<int64_t>::min() &&
              smax == std::numeric_limits<int64_t>::max())) {
    return "scalar";
  } else if (smin >= 0 ||
             umax <= uint64_t(std::numeric_limits<int64_t>::max())) {
    snprintf(buf, sizeof(buf), "scalar in [%llu, %llu]",
             (unsigned long long)umin, (unsigned long long)umax);
  } else {
    snprintf(buf, sizeof(buf), "scalar in [%lld, %lld]", (long long)smin,
             (long long)smax);
  }
  return buf;
}

uint64_t eval_alu64(AluOp op, uint64_t a, uint64_t b) {
  switch (op) {
  case AluOp::Add:
    return a + b;
  case AluOp::Sub:
    return a - b;
  case AluOp::Mul:
    return a * b;
  case AluOp::Div:
    return b ? a / b : 0;
  case AluOp::Mod:
    return b ? a % b : a;
  case AluOp::SDiv:
    if (b == 0)
      return 0;
    if (int64_t(b) == -1)
      return 0 - a; // INT64_MIN / -1 wraps to INT64_MIN
    return uint64_t(int64_t(a) / int64_t(b));
  case AluOp::SMod:
    if (b == 0)
      return a;
    if (int64_t(b) == -1)
      return 0;
    return uint64_t(int64_t(a) % int64_t(b));
  case AluOp::Or:
    return a | b;
  case AluOp::And:
    return a & b;
  case AluOp::Xor:
    return a ^ b;
  case AluOp::Lsh:
    return a << (b & 63);
  case AluOp::Rsh:
    return a >> (b & 63);
  case AluOp::Arsh:
    return uint64_t(int64_t(a) >> (b & 63));
  }
  return 0;
}

uint32_t eval_alu32(AluOp op, uint32_t a, uint32_t b) {
  switch (op) {
  case AluOp::Add:
    return a + b;
  case AluOp::Sub:
    return a - b;
  case AluOp::Mul:
    return a * b;
  case AluOp::Div:
    return b ? a / b : 0;
  case AluOp::Mod:
    return b ? a % b : a;
  case AluOp::SDiv:
    if (b == 0)
      return 0;
    if (int32_t(b) == -1)
      return 0 - a;
    return uint32_t(int32_t(a) / int32_t(b));
  case AluOp::SMod:
    if (b == 0)
      return a;
    if (int32_t(b) == -1)
      return 0;
    return uint32_t(int32_t(a) % int32_t(b));
  case AluOp::Or:
    return a | b;
  case AluOp::And:
    return a & b;
  case AluOp::Xor:
    return a ^ b;
  case AluOp::Lsh:
    return a << (b & 31);
  case AluOp::Rsh:
    return a >> (b & 31);
  case AluOp::Arsh:
    return uint32_t(int32_t(a) >> (b & 31));
  }
  return 0;
}

Scalar scalar_alu64(AluOp op, const Scalar &a, const Scalar &b) {
  if (a.is_const() && b.is_const())
    return Scalar::constant(eval_alu64(op, a.value(), b.value()));
  Scalar r;
  switch (op) {
  case AluOp::Add: {
    r.bits = tnum_add(a.bits, b.bits);
    uint64_t hi;
    if (!add_overflows(a.umax, b.umax, &hi)) {
      r.umin = a.umin + b.umin;
      r.umax = hi;
    }
    int64_t slo, shi;
    if (!__builtin_add_overflow(a.smin, b.smin, &slo) &&
        !__builtin_add_overflow(a.smax, b.smax, &shi)) {
      r.smin = slo;
      r.smax = shi;
    }
    break;
  }
  case AluOp::Sub: {
    r.bits = tnum_sub(a.bits, b.bits);
    if (a.umin >= b.umax) {
      r.umin = a.umin - b.umax;
      r.umax = a.umax - b.umin;
    }
    int64_t slo, shi;
    if (!__builtin_sub_overflow(a.smin, b.smax, &slo) &&
        !__builtin_sub_overflow(a.smax, b.smin, &shi)) {
      r.smin = slo;
      r.smax = shi;
    }
    break;
  }
  case AluOp::Mul: {
    uint64_t hi;
    if (!__builtin_mul_overflow(a.umax, b.umax, &hi)) {
      r.umin = a.umin * b.umin;
      r.umax = hi;
    }
    int64_t slo, shi;
    if (signed_mul_bounds(a, b, &slo, &shi)) {
      r.smin = slo;
      r.smax = shi;
    }
    break;
  }
  case AluOp::Div:
    if (b.umin > 0) {
      r.umin = a.umin / b.umax;
      r.umax = a.umax / b.umin;
    } else {
      r.umax = a.umax; // x / 0 == 0, x / y <= x
    }
    break;
  case AluOp::Mod:
    if (b.umin > a.umax)
      return a; // x % y == x when y > x (also covers y never being 0)
    r.umax = b.umin > 0 ? std::min(a.umax, b.umax - 1) : a.umax;
    break;
  case AluOp::SDiv:
  case AluOp::SMod:
    break;
  case AluOp::And:
    r.bits = tnum_and(a.bits, b.bits);
    r.umax = std::min(a.umax, b.umax);
    if (a.smin >= 0 || b.smin >= 0) {
      r.smin = 0;
      if (a.smin >= 0 && b.smin >= 0)
        r.smax = std::min(a.smax, b.smax);
      else
        r.smax = a.smin >= 0 ? a.smax : b.smax;
    }
    break;
  case AluOp::Or:
    r.bits = tnum_or(a.bits, b.bits);
    r.umin = std::max(a.umin, b.umin);
    break;
  case AluOp::Xor:
    r.bits = tnum_xor(a.bits, b.bits);
    break;
  case AluOp::Lsh:
  case AluOp::Rsh:
  case AluOp::Arsh:
    return shift64(op, a, b);
  }
  r.normalize();
  return r;
}

Scalar scalar_alu32(AluOp op, const Scalar &a, const Scalar &b) {
  Scalar a32 = a.zext32(), b32 = b.zext32();
  if (a32.is_const() && b32.is_const())
    return Scalar::constant(
        eval_alu32(op, uint32_t(a32.value()), uint32_t(b32.value())));
  bool is_shift = op == AluOp::Lsh || op == AluOp::Rsh || op == AluOp::Arsh;
  if (is_shift && !b32.is_const())
    return Scalar::of_bytes(4);
  if (is_shift) // the amount is taken modulo 32
    b32 = Scalar::constant(b32.value() & 31);
  // Compute on 64-bit images of the operands where the low 32 bits of the
  // 64-bit result are the 32-bit result: zero-extended for unsigned
  // operations, sign-extended for signed ones, both where either works.
  bool via_zext = op != AluOp::Arsh && op != AluOp::SDiv && op != AluOp::SMod;
  bool via_sext = op != AluOp::Rsh && op != AluOp::Div && op != AluOp::Mod;
  Scalar result = Scalar::of_bytes(4);
  if (via_zext)
    result.intersect(scalar_alu64(op, a32, b32).zext32());
  if (via_sext)
    result.intersect(
        scalar_alu64(op, a.sext32(), is_shift ? b32 : b.sext32()).zext32());
  return result;
}

Scalar scalar_endian(EndianOp op, int bits, const Scalar &a) {
  if (a.is_const()) {
    uint64_t v = a.value();
    switch (op) {
    case EndianOp::ToLe:
      break;
    case EndianOp::ToBe:
    case EndianOp::Swap:
      v = bits == 16   ? __builtin_bswap16(uint16_t(v))
          : bits == 32 ? __builtin_bswap32(uint32_t(v))
                       : __builtin_bswap64(v);
      break;
    }
    return Scalar::constant(bits == 64 ? v : v & ((uint64_t(1) << bits) - 1));
  }
  if (op == EndianOp::ToLe)
    return a.truncated(bits / 8);
  return Scalar::of_bytes(bits / 8);
}

Relation negate(Relation rel) {
  switch (rel) {
  case Relation::Eq:
    return Relation::Ne;
  case Relation::Ne:
    return Relation::Eq;
  case Relation::Ugt:
    return Relation::Ule;
  case Relation::Uge:
    return Relation::Ult;
  case Relation::Ult:
    return Relation::Uge;
  case Relation::Ule:
    return Relation::Ugt;
  case Relation::Sgt:
    return Relation::Sle;
  case Relation::Sge:
    return Relation::Slt;
  case Relation::Slt:
    return Relation::Sge;
  case Relation::Sle:
    return Relation::Sgt;
  case Relation::Set:
    return Relation::NotSet;
  case Relation::NotSet:
    return Relation::Set;
  }
  return rel;
}

namespace {

// Removes the single value c from s where it sits at an end of a range.
void exclude(Scalar &s, uint64_t c) {
  if (s.umin == c && s.umin != s.umax)
    ++s.umin;
  else if (s.umax == c && s.umin != s.umax)
    --s.umax;
  int64_t sc = int64_t(c);
  if (s.smin == sc && s.smin != s.smax)
    ++s.smin;
  else if (s.smax == sc && s.smin != s.smax)
    --s.smax;
}

} // namespace

bool refine64(Relation rel, Scalar &a, Scalar &b) {
  switch (rel) {
  case Relation::Eq:
    if (!a.intersect(b))
      return false;
    b = a;
    return true;
  case Relation::Ne:
    if (a.is_const() && b.is_const() && a.value() == b.value())
      return false;
    if (b.is_const())
      exclude(a, b.value());
    if (a.is_const())
      exclude(b, a.value());
    break;
  case Relation::Ugt:
    if (b.umin == std::numeric_limits<uint64_t>::max() || a.umax == 0)
      return false;
    a.umin = std::max(a.umin, b.umin + 1);
    b.umax = std::min(b.umax, a.umax - 1);
    break;
  case Relation::Uge:
    a.umin = std::max(a.umin, b.umin);
    b.umax = std::min(b.umax, a.umax);
    break;
  case Relation::Ult:
    return refine64(Relation::Ugt, b, a);
  case Relation::Ule:
    return refine64(Relation::Uge, b, a);
  case Relation::Sgt:
    if (b.smin == std::numeric_limits<int64_t>::max() ||
        a.smax == std::numeric_limits<int64_t>::min())
      return false;
    a.smin = std::max(a.smin, b.smin + 1);
    b.smax = std::min(b.smax, a.smax - 1);
    break;
  case Relation::Sge:
    a.smin = std::max(a.smin, b.smin);
    b.smax = std::min(b.smax, a.smax);
    break;
  case Relation::Slt:
    return refine64(Relation::Sgt, b, a);
  case Relation::Sle:
    return refine64(Relation::Sge, b, a);
  case Relation::Set:
    if ((a.bits.max() & b.bits.max()) == 0)
      return false;
    if (b.is_const() && std::has_single_bit(b.value())) {
      a.bits.value |= b.value();
      a.bits.mask &= ~b.value();
    }
    break;
  case Relation::NotSet:
    if (a.bits.value & b.bits.value)
      return false;
    if (b.is_const()) {
      a.bits.value &= ~b.value();
      a.bits.mask &= ~b.value();
    }
    break;
  }
  return a.normalize() && b.normalize();
}

bool refine32(Relation rel, Scalar &a, Scalar &b) {
  bool is_signed = rel == Relation::Sgt || rel == Relation::Sge ||
                   rel == Relation::Slt || rel == Relation::Sle;
  // On a 64-bit image of the low halves (one-to-one with them), then back.
  Scalar a64 = is_signed ? a.sext32() : a.zext32();
  Scalar b64 = is_signed ? b.sext32() : b.zext32();
  if (!refine64(rel, a64, b64))
    return false;
  auto narrow = [](Scalar &s, const Scalar &image) {
    Tnum lo = s.bits.low32(), image_lo = image.bits.low32();
    if (!lo.overlaps(image_lo))
      return false;
    s.bits = s.bits.with_low32(lo.intersect(image_lo));
    s.u32min = std::max(s.u32min, image.u32min);
    s.u32max = std::min(s.u32max, image.u32max);
    s.s32min = std::max(s.s32min, image.s32min);
    s.s32max = std::min(s.s32max, image.s32max);
    return s.normalize();
  };
  return narrow(a, a64) && narrow(b, b64);
}

} // namespace ubtrace::vm::verifier
