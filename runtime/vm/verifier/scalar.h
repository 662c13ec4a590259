// The verifier's abstract value of a number: known bits (tnum) plus unsigned
// and signed bounds of the full 64 bits and of the low 32 bits. All views
// describe the same set of values; normalize() lets each tighten the others.
// Transfer functions follow the VM's run-time semantics exactly (x/0 = 0,
// x%0 = x, shift amounts taken modulo the width).
#pragma once

#include "runtime/vm/verifier/tnum.h"

#include <cstdint>
#include <limits>
#include <string>

namespace ubtrace::vm::verifier {

struct Scalar {
  Tnum bits;
  uint64_t umin = 0;
  uint64_t umax = std::numeric_limits<uint64_t>::max();
  int64_t smin = std::numeric_limits<int64_t>::min();
  int64_t smax = std::numeric_limits<int64_t>::max();
  uint32_t u32min = 0;
  uint32_t u32max = std::numeric_limits<uint32_t>::max();
  int32_t s32min = std::numeric_limits<int32_t>::min();
  int32_t s32max = std::numeric_limits<int32_t>::max();

  static Scalar unknown() { return {}; }
  static Scalar constant(uint64_t v);
  static Scalar unsigned_range(uint64_t min, uint64_t max);
  static Scalar signed_range(int64_t min, int64_t max);
  // Any value of `bytes` bytes, zero-extended (what a narrow load yields).
  static Scalar of_bytes(int bytes);

  bool is_const() const { return bits.is_const(); }
  uint64_t value() const { return bits.value; }
  bool is_unknown() const { return *this == Scalar{}; }
  bool operator==(const Scalar &) const = default;

  // Tightens every view against the others; false if no value is left.
  bool normalize();
  // Every value of `other` is a value of this.
  bool contains(const Scalar &other) const;
  // Values in both; false if none.
  bool intersect(const Scalar &other);

  // The low 32 bits as a 64-bit value, zero- or sign-extended.
  Scalar zext32() const;
  Scalar sext32() const;
  // The low `bytes` bytes, zero-extended / the low `bits`, sign-extended.
  Scalar truncated(int bytes) const;
  Scalar sign_extended(int bits) const;

  std::string describe() const;
};

enum class AluOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  SDiv,
  Mod,
  SMod,
  Or,
  And,
  Xor,
  Lsh,
  Rsh,
  Arsh,
};

// dst op src on the full 64 bits.
Scalar scalar_alu64(AluOp op, const Scalar &a, const Scalar &b);
// dst op src on the low 32 bits; the result is zero-extended.
Scalar scalar_alu32(AluOp op, const Scalar &a, const Scalar &b);
// BPF_END: to little endian (identity on this host, truncating), to big
// endian, or unconditional bswap; `bits` is 16, 32 or 64.
enum class EndianOp : uint8_t { ToLe, ToBe, Swap };
Scalar scalar_endian(EndianOp op, int bits, const Scalar &a);

// Run-time semantics of the ALU, shared with constant folding.
uint64_t eval_alu64(AluOp op, uint64_t a, uint64_t b);
uint32_t eval_alu32(AluOp op, uint32_t a, uint32_t b);

// Relations a conditional jump asserts on the branch it takes.
enum class Relation : uint8_t {
  Eq,
  Ne,
  Ugt,
  Uge,
  Ult,
  Ule,
  Sgt,
  Sge,
  Slt,
  Sle,
  Set,
  NotSet,
};
Relation negate(Relation rel);
// Narrows a and b to the values satisfying `a rel b` on 64 / 32 bits;
// false if none do (that branch cannot be taken).
bool refine64(Relation rel, Scalar &a, Scalar &b);
bool refine32(Relation rel, Scalar &a, Scalar &b);

} // namespace ubtrace::vm::verifier
