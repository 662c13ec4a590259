// Which rel32 values a patch jump may use.
//
// When the jump covers several instructions, the bytes of its rel32 that sit
// where an instruction used to start must be trap bytes (trap_bytes.h), so
// a thread resuming there traps instead of decoding a displacement. Byte j
// of the rel32 (j = 0..3, little-endian) lies at patch_start + 1 + j; the
// constraint is a mask of the constrained j. The trampoline allocator
// searches addresses whose rel32 satisfies it.
#pragma once

#include <cstdint>
#include <optional>

namespace ubtrace::runtime::hook {

struct Rel32Constraint {
  uint8_t mask = 0; // bit j: byte j of the rel32 must be a trap byte

  bool satisfied_by(int64_t rel) const;
  // Smallest rel' >= rel, or largest rel' <= rel, that satisfies the
  // constraint, within the int64 range; nullopt when there is none.
  std::optional<int64_t> next_at_or_above(int64_t rel) const;
  std::optional<int64_t> next_at_or_below(int64_t rel) const;
};

} // namespace ubtrace::runtime::hook
