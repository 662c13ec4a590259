#include "runtime/hook/rel32_constraint.h"

#include "runtime/hook/trap_bytes.h"

namespace ubtrace::runtime::hook {
namespace {

uint8_t byte_of(uint64_t v, int j) {
  return static_cast<uint8_t>(v >> (8 * j));
}

uint64_t with_byte(uint64_t v, int j, uint8_t b) {
  uint64_t shift = 8 * j;
  return (v & ~(uint64_t{0xFF} << shift)) | (uint64_t{b} << shift);
}

// Smallest / largest trap byte >= / <= b.
std::optional<uint8_t> trap_at_or_above(uint8_t b) {
  for (uint8_t t : kTrapBytes)
    if (t >= b)
      return t;
  return std::nullopt;
}
std::optional<uint8_t> trap_at_or_below(uint8_t b) {
  for (auto it = kTrapBytes.rbegin(); it != kTrapBytes.rend(); ++it)
    if (*it <= b)
      return *it;
  return std::nullopt;
}

// Bytes 0..j of v set to 0 (low = true) or 0xFF.
uint64_t fill_low(uint64_t v, int j, bool zero) {
  uint64_t low_mask =
      (j >= 7) ? ~uint64_t{0} : ((uint64_t{1} << (8 * (j + 1))) - 1);
  return zero ? (v & ~low_mask) : (v | low_mask);
}

} // namespace

bool Rel32Constraint::satisfied_by(int64_t rel) const {
  for (int j = 0; j < 4; ++j)
    if ((mask >> j) & 1)
      if (!is_trap_byte(byte_of(static_cast<uint64_t>(rel), j)))
        return false;
  return true;
}

// Work on the two's complement bits: carries and borrows through byte 3
// move the value by 2^32, exactly as for the signed value.
std::optional<int64_t> Rel32Constraint::next_at_or_above(int64_t rel) const {
  uint64_t v = static_cast<uint64_t>(rel);
  for (int guard = 0; guard < 64; ++guard) {
    bool restarted = false;
    for (int j = 3; j >= 0 && !restarted; --j) {
      if (!((mask >> j) & 1))
        continue;
      uint8_t b = byte_of(v, j);
      if (is_trap_byte(b))
        continue;
      if (std::optional<uint8_t> t = trap_at_or_above(b)) {
        // Raise byte j; everything below restarts from zero.
        v = fill_low(with_byte(v, j, *t), j - 1, true);
        continue;
      }
      // No trap byte >= b here: carry into byte j+1, zero bytes 0..j.
      uint64_t next = fill_low(v, j, true) + (uint64_t{1} << (8 * (j + 1)));
      if (static_cast<int64_t>(next) < static_cast<int64_t>(v))
        return std::nullopt; // wrapped past INT64_MAX
      v = next;
      restarted = true;
    }
    if (!restarted)
      return static_cast<int64_t>(v);
  }
  return std::nullopt;
}

std::optional<int64_t> Rel32Constraint::next_at_or_below(int64_t rel) const {
  uint64_t v = static_cast<uint64_t>(rel);
  for (int guard = 0; guard < 64; ++guard) {
    bool restarted = false;
    for (int j = 3; j >= 0 && !restarted; --j) {
      if (!((mask >> j) & 1))
        continue;
      uint8_t b = byte_of(v, j);
      if (is_trap_byte(b))
        continue;
      if (std::optional<uint8_t> t = trap_at_or_below(b)) {
        v = fill_low(with_byte(v, j, *t), j - 1, false);
        continue;
      }
      // Borrow from byte j+1, bytes 0..j become 0xFF.
      uint64_t next = fill_low(v, j, false) - (uint64_t{1} << (8 * (j + 1)));
      if (static_cast<int64_t>(next) > static_cast<int64_t>(v))
        return std::nullopt;
      v = next;
      restarted = true;
    }
    if (!restarted)
      return static_cast<int64_t>(v);
  }
  return std::nullopt;
}

} // namespace ubtrace::runtime::hook
