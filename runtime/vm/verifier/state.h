// The abstract machine state the verifier walks: registers, stack and call
// frames, plus the bookkeeping a path needs (pc, parent checkpoint).
#pragma once

#include "runtime/vm/helpers.h"
#include "runtime/vm/insn.h"
#include "runtime/vm/verifier/scalar.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::vm::verifier {

enum class RegKind : uint8_t {
  NotInit,
  Scalar,
  Ctx,            // the program's context
  Stack,          // a frame's stack: frame index in `frame`
  MapPtr,         // a map reference (map index in `map`)
  MapValue,       // a map value (map index in `map`)
  MapValueOrNull, // map_lookup_elem's result before the NULL check
  MapKey,         // a key handed to a for_each callback (read-only)
  Mem,            // `mem_size` bytes from a helper (ringbuf_reserve)
  MemOrNull,      // the same before the NULL check
  Func,           // a callback: its entry pc in `map`
};

const char *reg_kind_name(RegKind kind);

struct Reg {
  RegKind kind = RegKind::NotInit;
  uint8_t frame = 0;     // Stack
  uint32_t map = 0;      // MapPtr/MapValue*/MapKey: map index; Func: pc
  uint32_t mem_size = 0; // Mem*
  // Scalar: registers holding copies of one value share an id, so bounds a
  // branch learns on one apply to all. *OrNull: copies of one helper result
  // share an id, so a NULL check on one settles all.
  uint32_t id = 0;
  uint32_t ref = 0; // Mem* from ringbuf_reserve: the reference to release
  int32_t off = 0;  // pointers: fixed part of the offset
  Scalar var = Scalar::constant(0); // Scalar: value; pointer: variable offset

  static Reg scalar(const verifier::Scalar &value, uint32_t id = 0) {
    Reg r;
    r.kind = RegKind::Scalar;
    r.var = value;
    r.id = id;
    return r;
  }
  static Reg unknown() { return scalar(verifier::Scalar::unknown()); }
  static Reg pointer(RegKind kind) {
    Reg r;
    r.kind = kind;
    return r;
  }
  bool is_pointer() const {
    return kind != RegKind::NotInit && kind != RegKind::Scalar;
  }
  bool is_null_const() const {
    return kind == RegKind::Scalar && var.is_const() && var.value() == 0;
  }
  bool operator==(const Reg &) const = default;
  std::string describe() const;
};

enum class ByteKind : uint8_t {
  Invalid, // never written: reading it is an error
  Misc,    // written with something unknown
  Known,   // written with a known byte (StackSlot::known)
  Spill,   // part of the register saved in the slot
};

// Eight bytes of stack: slot i covers [-8(i+1), -8i) from the frame pointer;
// bytes[0] is the lowest address. A register spilled with a store at the
// slot's start is remembered whole, so a later load gets its type and
// bounds back; constants stored anywhere are remembered byte by byte (loop
// counters kept in memory stay exact).
struct StackSlot {
  std::array<ByteKind, 8> bytes{};
  std::array<uint8_t, 8> known{}; // values of Known bytes, 0 elsewhere
  Reg spill;
  bool operator==(const StackSlot &) const = default;
  bool has_spill() const {
    for (ByteKind b : bytes)
      if (b == ByteKind::Spill)
        return true;
    return false;
  }
  // The value of byte i if it is known (a Known byte or part of a spilled
  // constant).
  bool known_byte(size_t i, uint8_t &value) const {
    if (bytes[i] == ByteKind::Known) {
      value = known[i];
      return true;
    }
    if (bytes[i] == ByteKind::Spill && spill.kind == RegKind::Scalar &&
        spill.var.is_const()) {
      value = uint8_t(spill.var.value() >> (8 * i));
      return true;
    }
    return false;
  }
};

struct Frame {
  std::array<Reg, kNumRegs> regs;
  std::vector<StackSlot> stack; // grows on demand, never past 512 bytes
  uint32_t subprog = 0;         // index in the subprogram list
  int32_t callsite = -1;        // pc of the call that made this frame
  CallbackKind callback = CallbackKind::None; // non-None: a helper's callback
  std::array<Reg, 5> callback_args{};         // r1..r5 on each invocation
  uint32_t callback_rounds = 0;               // re-entries so far

  StackSlot &slot(uint32_t index) {
    if (index >= stack.size())
      stack.resize(index + 1);
    return stack[index];
  }
};

struct RefEntry {
  uint32_t id = 0;
  uint32_t pc = 0; // where it was acquired
  bool operator==(const RefEntry &) const = default;
};

struct Checkpoint;

struct State {
  std::vector<Frame> frames;
  std::vector<RefEntry> refs;
  // Path bookkeeping, not part of the abstract value:
  uint32_t pc = 0;
  int32_t last_back_edge = -1;   // pc of the latest backward jump taken
  Checkpoint *parent = nullptr;  // the latest checkpoint on this path
  bool callback_reentry = false; // at a callback's entry for another round
  // Per frame: stack slots wholly written since `parent` (stack liveness).
  std::vector<uint64_t> written;

  Frame &top() { return frames.back(); }
  const Frame &top() const { return frames.back(); }
  Reg &reg(int r) { return frames.back().regs[r]; }
  const Reg &reg(int r) const { return frames.back().regs[r]; }
};

// A state remembered at a prune point. Complete once every path leaving it
// has finished (branches == 0): a later state it subsumes is then safe.
struct Checkpoint {
  State state;
  uint32_t pc = 0;
  uint64_t fingerprint = 0; // state_fingerprint() when stored
  // Per frame: stack slots some path below read before writing them (only
  // those matter when this checkpoint prunes), and slots wholly written on
  // the way from the parent checkpoint to this one.
  std::vector<uint64_t> read;
  std::vector<uint64_t> segment_written;
  Checkpoint *parent = nullptr;
  uint32_t branches = 0; // paths and checkpoints still in progress below
  uint32_t hits = 0;
  uint32_t misses = 0;
  bool evicted = false;
};

// Which registers matter when comparing states at a pc: bit r set when r is
// live there (read before written on some path).
using LiveRegs = uint16_t;

// What matters of one frame at the pc it will continue from.
struct FrameView {
  LiveRegs live = 0;           // registers read later
  LiveRegs relevant = 0;       // ...whose numeric values matter (relevance.h)
  uint64_t relevant_slots = 0; // stack slots whose numeric values matter
};

enum class CompareMode : uint8_t {
  Subsume, // old covers every value of cur: safe to prune cur
  Exact,   // identical: a loop went round without changing anything
};

// `old` (at a checkpoint) covers `cur` at the same pc; views[i] describes
// frame i. Numbers that do not matter are compared by type only; with
// `live_slots`, only the stack slots it marks per frame are compared.
bool state_covers(const State &old, const State &cur,
                  const std::vector<FrameView> &views, CompareMode mode,
                  const std::vector<uint64_t> *live_slots = nullptr);

// A hash equal for states state_covers(Exact) finds identical: a cheap
// first test before comparing in full.
uint64_t state_fingerprint(const State &state,
                           const std::vector<FrameView> &views);

// A quick necessary condition for state_covers(Subsume): every number that
// matters and is constant in the innermost frame of `old` has the same
// value in `cur`. Loop counters make most candidates fail here.
bool may_cover(const State &old, const State &cur, const FrameView &top_view);

// One line naming the initialised registers of the innermost frame.
std::string describe_regs(const State &state);

// Loosens `cur` so that it covers `prev` too, where both differ only in
// numbers: differing scalars become unknown, stack bytes join. Used when a
// callback runs again, so its rounds converge.
void widen(const State &prev, State &cur);

} // namespace ubtrace::vm::verifier
