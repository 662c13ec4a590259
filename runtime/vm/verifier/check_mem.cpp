// LDX, ST, STX (plain and atomic): every access is checked against the
// object its pointer points to. The stack is tracked byte by byte, so reads
// of bytes never written are caught, and registers spilled to it come back
// with their type and bounds.
#include "runtime/vm/verifier/engine.h"

#include <cstring>

namespace ubtrace::vm::verifier {
namespace {

std::string fp(int64_t off) {
  return off < 0 ? "fp" + std::to_string(off) : "fp+" + std::to_string(off);
}

// Where the byte at frame-pointer offset `off` (-512 <= off < 0) lives.
struct BytePos {
  uint32_t slot;
  uint32_t byte;
};
BytePos locate(int64_t off) {
  uint32_t slot = uint32_t((-off - 1) / 8);
  return {slot, uint32_t(off + 8 * (int64_t(slot) + 1))};
}

ByteKind byte_at(const Frame &frame, int64_t off) {
  BytePos p = locate(off);
  return p.slot < frame.stack.size() ? frame.stack[p.slot].bytes[p.byte]
                                     : ByteKind::Invalid;
}

// A partly overwritten spill is no longer a register: its bytes stay
// initialised (and known, if it was a constant) but lose their meaning.
void drop_spill(StackSlot &slot) {
  for (size_t i = 0; i < 8; ++i) {
    if (slot.bytes[i] != ByteKind::Spill)
      continue;
    uint8_t v;
    bool known = slot.known_byte(i, v);
    slot.bytes[i] = known ? ByteKind::Known : ByteKind::Misc;
    slot.known[i] = known ? v : 0;
  }
  slot.spill = Reg{};
}

void set_byte(StackSlot &slot, uint32_t i, ByteKind kind, uint8_t value = 0) {
  slot.bytes[i] = kind;
  slot.known[i] = kind == ByteKind::Known ? value : 0;
}

void write_bytes(Frame &frame, int64_t lo, int64_t hi, ByteKind kind) {
  for (int64_t off = lo; off < hi; ++off) {
    BytePos p = locate(off);
    StackSlot &slot = frame.slot(p.slot);
    if (slot.has_spill())
      drop_spill(slot);
    set_byte(slot, p.byte, kind);
  }
}

bool fits_in(const Scalar &v, int size) {
  return size >= 8 || v.umax < (uint64_t(1) << (size * 8));
}

void store_fixed(Frame &frame, int64_t off, int size, const Reg &value) {
  BytePos p = locate(off);
  if (p.byte == 0 && (size == 8 || (value.kind == RegKind::Scalar &&
                                    fits_in(value.var, size)))) {
    StackSlot &slot = frame.slot(p.slot);
    drop_spill(slot);
    slot.spill = value;
    for (int i = 0; i < size; ++i)
      slot.bytes[i] = ByteKind::Spill;
    return;
  }
  if (value.kind != RegKind::Scalar || !value.var.is_const()) {
    write_bytes(frame, off, off + size, ByteKind::Misc);
    return;
  }
  for (int i = 0; i < size; ++i) {
    BytePos b = locate(off + i);
    StackSlot &slot = frame.slot(b.slot);
    if (slot.has_spill())
      drop_spill(slot);
    set_byte(slot, b.byte, ByteKind::Known,
             uint8_t(value.var.value() >> (8 * i)));
  }
}

Reg load_fixed(const Frame &frame, int64_t off, int size, bool via_fp) {
  BytePos p = locate(off);
  if (p.byte == 0 && p.slot < frame.stack.size()) {
    const StackSlot &slot = frame.stack[p.slot];
    bool spilled = true;
    for (int i = 0; i < size; ++i)
      spilled = spilled && slot.bytes[i] == ByteKind::Spill;
    if (spilled && size == 8 && slot.spill.is_pointer())
      return slot.spill;
    if (!via_fp)
      return Reg::scalar(Scalar::of_bytes(size));
    if (spilled) {
      if (size == 8)
        return slot.spill;
      if (slot.spill.kind == RegKind::Scalar)
        return fits_in(slot.spill.var, size)
                   ? slot.spill
                   : Reg::scalar(slot.spill.var.truncated(size));
      return Reg::scalar(Scalar::of_bytes(size));
    }
  }
  // Known bytes make a known number (little-endian).
  uint64_t value = 0;
  for (int i = 0; i < size; ++i) {
    BytePos b = locate(off + i);
    uint8_t v;
    if (b.slot >= frame.stack.size() ||
        !frame.stack[b.slot].known_byte(b.byte, v))
      return Reg::scalar(Scalar::of_bytes(size));
    value |= uint64_t(v) << (8 * i);
  }
  return Reg::scalar(Scalar::constant(value));
}

// [lo, hi) of the accessed object, from the pointer's fixed and variable
// parts and the instruction's offset.
struct Span {
  int64_t lo, hi;
};
Span span_of(const Reg &ptr, int32_t off, uint64_t size) {
  return {int64_t(ptr.off) + ptr.var.smin + off,
          int64_t(ptr.off) + ptr.var.smax + off + int64_t(size)};
}

std::string range_text(const Reg &ptr, Span s, uint64_t size) {
  std::string text = "offset " + std::to_string(s.lo);
  if (!ptr.var.is_const())
    text += ".." + std::to_string(s.hi - int64_t(size));
  return text + " size " + std::to_string(size);
}

Result<void> check_bounds(uint32_t pc, const Reg &ptr, Span s, uint64_t size,
                          int64_t limit, const std::string &object) {
  if (s.lo >= 0 && s.hi <= limit)
    return {};
  return fail_at(pc,
                 object + " access out of bounds: " + range_text(ptr, s, size) +
                     ", " + object + " is " + std::to_string(limit) + " bytes");
}

Result<void> check_stack(Engine &engine, State &state, const Reg &ptr, Span s,
                         uint64_t size, Access access) {
  uint32_t pc = state.pc;
  if (s.lo < -kStackSize || s.hi > 0) {
    std::string where = ptr.var.is_const()
                            ? fp(s.lo)
                            : fp(s.lo) + ".." + fp(s.hi - int64_t(size));
    return fail_at(pc, "stack access out of the " + std::to_string(kStackSize) +
                           "-byte frame: " + where + " size " +
                           std::to_string(size));
  }
  engine.note_stack_depth(state, ptr.frame, -s.lo);
  if (access != Access::Read)
    return {};
  engine.note_stack_read(state, ptr.frame, s.lo, s.hi);
  const Frame &frame = state.frames[ptr.frame];
  for (int64_t off = s.lo; off < s.hi; ++off)
    if (byte_at(frame, off) == ByteKind::Invalid)
      return fail_at(pc, "invalid read from uninitialized stack at " + fp(off) +
                             " (reading " + fp(s.lo) + " size " +
                             std::to_string(s.hi - s.lo) + ")");
  return {};
}

} // namespace

Result<void> check_region(Engine &engine, State &state, int regno,
                          const Reg &ptr, int32_t off, uint64_t size,
                          Access access) {
  uint32_t pc = state.pc;
  std::string r = "r" + std::to_string(regno);
  Span s = span_of(ptr, off, size);
  switch (ptr.kind) {
  case RegKind::NotInit:
    return fail_at(pc, "invalid read from uninitialized register " + r);
  case RegKind::Scalar:
    return fail_at(pc, "invalid memory access through " + r + ": it holds " +
                           ptr.var.describe() + ", not a pointer");
  case RegKind::MapPtr:
  case RegKind::Func:
    return fail_at(pc, "invalid memory access through " + r + ": it holds a " +
                           reg_kind_name(ptr.kind) + " reference");
  case RegKind::MapValueOrNull:
  case RegKind::MemOrNull:
    return fail_at(pc, "possibly NULL pointer " + r + " (" +
                           reg_kind_name(ptr.kind) +
                           ") dereferenced; compare it with 0 first");
  case RegKind::Ctx:
    if (access != Access::Read && !engine.ctx().writable)
      return fail_at(pc, "write to the read-only ctx through " + r);
    if (!ptr.var.is_const() && !engine.ctx().allow_variable_offset)
      return fail_at(pc,
                     "variable offset ctx access through " + r + " prohibited");
    if (access != Access::Write)
      engine.note_ctx_read(s.lo, s.hi);
    return check_bounds(pc, ptr, s, size, engine.ctx().size, "ctx");
  case RegKind::Stack:
    return check_stack(engine, state, ptr, s, size, access);
  case RegKind::MapValue: {
    const MapDef &map = engine.map(ptr.map);
    if (access != Access::Read && map.read_only)
      return fail_at(pc, "write into read-only map '" + map.name + "'");
    return check_bounds(pc, ptr, s, size, map.value_size,
                        "map '" + map.name + "' value");
  }
  case RegKind::MapKey: {
    const MapDef &map = engine.map(ptr.map);
    if (access != Access::Read)
      return fail_at(pc, "write into a key of map '" + map.name + "'");
    return check_bounds(pc, ptr, s, size, map.key_size,
                        "map '" + map.name + "' key");
  }
  case RegKind::Mem:
    return check_bounds(pc, ptr, s, size, ptr.mem_size, "mem");
  }
  return fail_at(pc, "unknown pointer kind");
}

Reg load_value(Engine &engine, State &state, const Reg &ptr, int32_t off,
               int size, bool via_fp) {
  switch (ptr.kind) {
  case RegKind::Stack:
    if (ptr.var.is_const())
      return load_fixed(state.frames[ptr.frame],
                        int64_t(ptr.off) + int64_t(ptr.var.value()) + off, size,
                        via_fp);
    break;
  case RegKind::MapValue: {
    // Read-only global data is known: constants the compiler put in
    // .rodata stay constants.
    const MapDef &map = engine.map(ptr.map);
    if (map.read_only && ptr.var.is_const() &&
        map.initial_value.size() == map.value_size) {
      uint64_t v = 0;
      memcpy(&v,
             map.initial_value.data() + ptr.off + int64_t(ptr.var.value()) +
                 off,
             size_t(size));
      return Reg::scalar(Scalar::constant(v));
    }
    break;
  }
  case RegKind::NotInit:
  case RegKind::Scalar:
  case RegKind::Ctx:
  case RegKind::MapPtr:
  case RegKind::MapValueOrNull:
  case RegKind::MapKey:
  case RegKind::Mem:
  case RegKind::MemOrNull:
  case RegKind::Func:
    break;
  }
  return Reg::scalar(Scalar::of_bytes(size));
}

void store_value(Engine &engine, State &state, const Reg &ptr, int32_t off,
                 int size, const Reg &value, bool keep_value) {
  if (ptr.kind != RegKind::Stack)
    return;
  Frame &frame = state.frames[ptr.frame];
  if (ptr.var.is_const()) {
    int64_t at = int64_t(ptr.off) + int64_t(ptr.var.value()) + off;
    engine.note_stack_written(state, ptr.frame, at, at + size);
    if (keep_value || value.is_pointer())
      store_fixed(frame, at, size, value);
    else
      write_bytes(frame, at, at + size, ByteKind::Misc);
    return;
  }
  // Some byte in the span is written, we do not know which: bytes already
  // initialised stay so (as unknown data), others stay uninitialised.
  Span s = span_of(ptr, off, uint64_t(size));
  for (int64_t o = s.lo; o < s.hi; ++o) {
    BytePos p = locate(o);
    if (p.slot >= frame.stack.size())
      continue;
    StackSlot &slot = frame.stack[p.slot];
    if (slot.has_spill())
      drop_spill(slot);
    if (slot.bytes[p.byte] == ByteKind::Known)
      set_byte(slot, p.byte, ByteKind::Misc);
  }
}

void mark_helper_written(Engine &engine, State &state, const Reg &ptr,
                         uint64_t size) {
  if (ptr.kind != RegKind::Stack || size == 0)
    return;
  Frame &frame = state.frames[ptr.frame];
  if (ptr.var.is_const()) {
    int64_t lo = int64_t(ptr.off) + int64_t(ptr.var.value());
    engine.note_stack_written(state, ptr.frame, lo, lo + int64_t(size));
    write_bytes(frame, lo, lo + int64_t(size), ByteKind::Misc);
    return;
  }
  // Unknown which bytes: only spills in the span are certainly gone.
  Span s = span_of(ptr, 0, size);
  for (int64_t o = s.lo; o < s.hi; ++o) {
    BytePos p = locate(o);
    if (p.slot < frame.stack.size() && frame.stack[p.slot].has_spill())
      drop_spill(frame.stack[p.slot]);
  }
}

Result<Step> check_ldx(Engine &engine, State &state, const Insn &in) {
  if (auto r = engine.check_readable(state, in.src); !r)
    return std::move(r).take_error();
  Reg ptr = state.reg(in.src);
  int size = access_bytes(insn_size(in.code));
  if (auto r = check_region(engine, state, in.src, ptr, in.off, uint64_t(size),
                            Access::Read);
      !r)
    return std::move(r).take_error();
  Reg value =
      load_value(engine, state, ptr, in.off, size, in.src == kFramePointer);
  if (insn_mode(in.code) == kModeMemSx)
    value = Reg::scalar(value.var.sign_extended(size * 8));
  state.reg(in.dst) = value;
  ++state.pc;
  return Step::Continue;
}

Result<Step> check_st(Engine &engine, State &state, const Insn &in) {
  if (auto r = engine.check_readable(state, in.dst); !r)
    return std::move(r).take_error();
  Reg ptr = state.reg(in.dst);
  int size = access_bytes(insn_size(in.code));
  if (auto r = check_region(engine, state, in.dst, ptr, in.off, uint64_t(size),
                            Access::Write);
      !r)
    return std::move(r).take_error();
  Scalar v = Scalar::constant(uint64_t(int64_t(in.imm))).truncated(size);
  store_value(engine, state, ptr, in.off, size, Reg::scalar(v), true);
  ++state.pc;
  return Step::Continue;
}

namespace {

Result<Step> check_atomic(Engine &engine, State &state, const Insn &in) {
  uint32_t pc = state.pc;
  Reg ptr = state.reg(in.dst);
  const Reg &src = state.reg(in.src);
  int size = access_bytes(insn_size(in.code));
  if (src.kind != RegKind::Scalar)
    return fail_at(pc, "atomic operation with pointer r" +
                           std::to_string(in.src) + " prohibited");
  if (in.imm == BPF_CMPXCHG) {
    if (auto r = engine.check_readable(state, 0); !r)
      return std::move(r).take_error();
    if (state.reg(0).kind != RegKind::Scalar)
      return fail_at(pc, "atomic compare-exchange with pointer r0 prohibited");
  }
  if (ptr.kind == RegKind::Ctx)
    return fail_at(pc, "atomic operation on ctx prohibited");
  for (Access access : {Access::Read, Access::Write})
    if (auto r = check_region(engine, state, in.dst, ptr, in.off,
                              uint64_t(size), access);
        !r)
      return std::move(r).take_error();
  store_value(engine, state, ptr, in.off, size,
              Reg::scalar(Scalar::of_bytes(size)), true);
  if (in.imm == BPF_CMPXCHG)
    state.reg(0) = Reg::scalar(Scalar::of_bytes(size));
  else if (in.imm & BPF_FETCH)
    state.reg(in.src) = Reg::scalar(Scalar::of_bytes(size));
  ++state.pc;
  return Step::Continue;
}

} // namespace

Result<Step> check_stx(Engine &engine, State &state, const Insn &in) {
  if (auto r = engine.check_readable(state, in.dst); !r)
    return std::move(r).take_error();
  if (auto r = engine.check_readable(state, in.src); !r)
    return std::move(r).take_error();
  if (insn_mode(in.code) == BPF_ATOMIC)
    return check_atomic(engine, state, in);
  Reg ptr = state.reg(in.dst);
  int size = access_bytes(insn_size(in.code));
  if (auto r = check_region(engine, state, in.dst, ptr, in.off, uint64_t(size),
                            Access::Write);
      !r)
    return std::move(r).take_error();
  store_value(engine, state, ptr, in.off, size, state.reg(in.src),
              in.dst == kFramePointer);
  ++state.pc;
  return Step::Continue;
}

} // namespace ubtrace::vm::verifier
