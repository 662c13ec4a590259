// Tristate numbers: which bits of a 64-bit value are known (mask bit 0, value
// bit gives it) and which are unknown (mask bit 1, value bit 0). The bit-level
// half of the verifier's scalar domain; scalar.h adds the ranges.
#pragma once

#include <bit>
#include <cstdint>

namespace ubtrace::vm::verifier {

struct Tnum {
  uint64_t value = 0;
  uint64_t mask = ~uint64_t(0);

  static constexpr Tnum constant(uint64_t v) { return {v, 0}; }
  static constexpr Tnum unknown() { return {0, ~uint64_t(0)}; }
  // The smallest tnum holding every value in [min, max].
  static constexpr Tnum range(uint64_t min, uint64_t max) {
    uint64_t differ = min ^ max;
    if (differ == 0)
      return constant(min);
    int bits = 64 - std::countl_zero(differ);
    if (bits >= 64)
      return unknown();
    uint64_t low = (uint64_t(1) << bits) - 1;
    return {min & ~low, low};
  }

  constexpr bool is_const() const { return mask == 0; }
  constexpr uint64_t min() const { return value; }
  constexpr uint64_t max() const { return value | mask; }
  constexpr bool operator==(const Tnum &) const = default;
  // Every value of `other` is a value of this.
  constexpr bool contains(const Tnum &other) const {
    return (other.mask & ~mask) == 0 && ((value ^ other.value) & ~mask) == 0;
  }
  // Both tnums share at least one value.
  constexpr bool overlaps(const Tnum &other) const {
    return ((value ^ other.value) & ~mask & ~other.mask) == 0;
  }
  // Values in both (callers check overlaps() first).
  constexpr Tnum intersect(const Tnum &other) const {
    uint64_t v = value | other.value;
    uint64_t m = mask & other.mask;
    return {v & ~m, m};
  }
  constexpr Tnum low32() const {
    return {value & 0xffffffffu, mask & 0xffffffffu};
  }
  // Replace the low 32 bits with those of `low`.
  constexpr Tnum with_low32(const Tnum &low) const {
    return {(value & ~uint64_t(0xffffffffu)) | (low.value & 0xffffffffu),
            (mask & ~uint64_t(0xffffffffu)) | (low.mask & 0xffffffffu)};
  }
  // Truncate to `bytes` bytes (zero-extended).
  constexpr Tnum truncate(int bytes) const {
    if (bytes >= 8)
      return *this;
    uint64_t keep = (uint64_t(1) << (bytes * 8)) - 1;
    return {value & keep, mask & keep};
  }
  // Sign-extend from `bits` bits.
  constexpr Tnum sign_extend(int bits) const {
    if (bits >= 64)
      return *this;
    int shift = 64 - bits;
    return {uint64_t(int64_t(value << shift) >> shift),
            uint64_t(int64_t(mask << shift) >> shift)};
  }
};

constexpr Tnum tnum_add(Tnum a, Tnum b) {
  uint64_t sum_mask = a.mask + b.mask;
  uint64_t sum_value = a.value + b.value;
  uint64_t carries = (sum_mask + sum_value) ^ sum_value;
  uint64_t unknown = carries | a.mask | b.mask;
  return {sum_value & ~unknown, unknown};
}

constexpr Tnum tnum_sub(Tnum a, Tnum b) {
  uint64_t diff = a.value - b.value;
  uint64_t borrows = (diff + a.mask) ^ (diff - b.mask);
  uint64_t unknown = borrows | a.mask | b.mask;
  return {diff & ~unknown, unknown};
}

constexpr Tnum tnum_and(Tnum a, Tnum b) {
  uint64_t maybe_a = a.value | a.mask;
  uint64_t maybe_b = b.value | b.mask;
  uint64_t known_one = a.value & b.value;
  return {known_one, maybe_a & maybe_b & ~known_one};
}

constexpr Tnum tnum_or(Tnum a, Tnum b) {
  uint64_t known_one = a.value | b.value;
  return {known_one, (a.mask | b.mask) & ~known_one};
}

constexpr Tnum tnum_xor(Tnum a, Tnum b) {
  uint64_t unknown = a.mask | b.mask;
  return {(a.value ^ b.value) & ~unknown, unknown};
}

constexpr Tnum tnum_lsh(Tnum a, unsigned k) {
  return {a.value << k, a.mask << k};
}
constexpr Tnum tnum_rsh(Tnum a, unsigned k) {
  return {a.value >> k, a.mask >> k};
}
constexpr Tnum tnum_arsh(Tnum a, unsigned k) {
  return {uint64_t(int64_t(a.value) >> k), uint64_t(int64_t(a.mask) >> k)};
}

} // namespace ubtrace::vm::verifier
