#include "runtime/vm/verifier/state.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace ubtrace::vm::verifier {

const char *reg_kind_name(RegKind kind) {
  switch (kind) {
  case RegKind::NotInit:
    return "uninitialized";
  case RegKind::Scalar:
    return "scalar";
  case RegKind::Ctx:
    return "ctx";
  case RegKind::Stack:
    return "stack pointer";
  case RegKind::MapPtr:
    return "map";
  case RegKind::MapValue:
    return "map_value";
  case RegKind::MapValueOrNull:
    return "map_value_or_null";
  case RegKind::MapKey:
    return "map_key";
  case RegKind::Mem:
    return "mem";
  case RegKind::MemOrNull:
    return "mem_or_null";
  case RegKind::Func:
    return "func";
  }
  return "?";
}

std::string Reg::describe() const {
  if (kind == RegKind::Scalar)
    return var.describe();
  std::string text = reg_kind_name(kind);
  if (!is_pointer())
    return text;
  char buf[64];
  if (var.is_const())
    snprintf(buf, sizeof(buf), " (offset %lld)",
             (long long)(off + int64_t(var.value())));
  else
    snprintf(buf, sizeof(buf), " (offset %d + [%lld, %lld])", off,
             (long long)var.smin, (long long)var.smax);
  return text + buf;
}

std::string describe_regs(const State &state) {
  std::string out;
  const Frame &top = state.top();
  for (int r = 0; r < kNumRegs - 1; ++r) {
    const Reg &reg = top.regs[r];
    if (reg.kind == RegKind::NotInit)
      continue;
    out += " r" + std::to_string(r) + "=" + reg.describe();
    if (reg.id)
      out += "#" + std::to_string(reg.id);
  }
  if (state.frames.size() > 1)
    out += " (frame " + std::to_string(state.frames.size() - 1) + ")";
  return out;
}

namespace {

// Old ids must correspond one-to-one with current ids: the old path relied
// on registers sharing an id learning together.
class IdMap {
public:
  bool match(uint32_t old_id, uint32_t cur_id) {
    if (old_id == 0)
      return true;
    if (cur_id == 0)
      return false;
    for (auto [o, c] : pairs_) {
      if (o == old_id || c == cur_id)
        return o == old_id && c == cur_id;
    }
    pairs_.emplace_back(old_id, cur_id);
    return true;
  }

private:
  std::vector<std::pair<uint32_t, uint32_t>> pairs_;
};

bool reg_covers(const Reg &old, const Reg &cur, IdMap &ids, CompareMode mode,
                bool relevant) {
  // A number whose value never matters: any number will do.
  if (old.kind == RegKind::Scalar && !relevant)
    return cur.kind == RegKind::Scalar;
  if (mode == CompareMode::Exact) {
    if (old.kind != cur.kind || old.frame != cur.frame || old.map != cur.map ||
        old.mem_size != cur.mem_size || old.off != cur.off ||
        !(old.var == cur.var))
      return false;
    if ((old.id == 0) != (cur.id == 0) || (old.ref == 0) != (cur.ref == 0))
      return false;
    return ids.match(old.id, cur.id) && ids.match(old.ref, cur.ref);
  }
  switch (old.kind) {
  case RegKind::NotInit:
    return true; // the old path never read it
  case RegKind::Scalar:
    return cur.kind == RegKind::Scalar && old.var.contains(cur.var) &&
           ids.match(old.id, cur.id);
  case RegKind::Ctx:
  case RegKind::Stack:
  case RegKind::MapPtr:
  case RegKind::MapValue:
  case RegKind::MapValueOrNull:
  case RegKind::MapKey:
  case RegKind::Mem:
  case RegKind::MemOrNull:
  case RegKind::Func:
    return cur.kind == old.kind && cur.frame == old.frame &&
           cur.map == old.map && cur.mem_size == old.mem_size &&
           cur.off == old.off && old.var.contains(cur.var) &&
           ids.match(old.id, cur.id) && ids.match(old.ref, cur.ref);
  }
  return false;
}

bool byte_covers(const StackSlot &old, const StackSlot &cur, size_t i) {
  ByteKind o = old.bytes[i], c = cur.bytes[i];
  uint8_t ov, cv;
  switch (o) {
  case ByteKind::Invalid:
    return true;
  case ByteKind::Misc:
    return c == ByteKind::Misc || c == ByteKind::Known ||
           (c == ByteKind::Spill && cur.spill.kind == RegKind::Scalar);
  case ByteKind::Known:
    return old.known_byte(i, ov) && cur.known_byte(i, cv) && ov == cv;
  case ByteKind::Spill:
    return c == ByteKind::Spill;
  }
  return false;
}

// What a byte holds when its numeric value does not matter.
enum class ByteClass : uint8_t { Invalid, Data, Pointer };
ByteClass classify(ByteKind b, const Reg &spill) {
  if (b == ByteKind::Invalid)
    return ByteClass::Invalid;
  if (b == ByteKind::Spill && spill.is_pointer())
    return ByteClass::Pointer;
  return ByteClass::Data;
}

const StackSlot &slot_or_invalid(const Frame &f, size_t i) {
  static const StackSlot invalid{};
  return i < f.stack.size() ? f.stack[i] : invalid;
}

bool slot_covers(const StackSlot &o, const StackSlot &c, IdMap &ids,
                 CompareMode mode, bool relevant) {
  if (!relevant) {
    for (size_t b = 0; b < 8; ++b) {
      ByteClass ob = classify(o.bytes[b], o.spill);
      ByteClass cb = classify(c.bytes[b], c.spill);
      if (ob == ByteClass::Invalid && mode == CompareMode::Subsume)
        continue;
      if (ob != cb)
        return false;
    }
    if (o.has_spill() && o.spill.is_pointer())
      return reg_covers(o.spill, c.spill, ids, mode, true);
    return true;
  }
  if (mode == CompareMode::Exact) {
    if (o.bytes != c.bytes || o.known != c.known)
      return false;
    return !o.has_spill() || reg_covers(o.spill, c.spill, ids, mode, true);
  }
  for (size_t b = 0; b < 8; ++b)
    if (!byte_covers(o, c, b))
      return false;
  return !o.has_spill() || reg_covers(o.spill, c.spill, ids, mode, true);
}

bool stack_covers(const Frame &old, const Frame &cur, IdMap &ids,
                  CompareMode mode, uint64_t relevant_slots,
                  uint64_t live_slots) {
  size_t n = std::max(old.stack.size(), cur.stack.size());
  for (size_t i = 0; i < n; ++i)
    if (((live_slots >> i) & 1) &&
        !slot_covers(slot_or_invalid(old, i), slot_or_invalid(cur, i), ids,
                     mode, (relevant_slots >> i) & 1))
      return false;
  return true;
}

} // namespace

bool state_covers(const State &old, const State &cur,
                  const std::vector<FrameView> &views, CompareMode mode,
                  const std::vector<uint64_t> *live_slots) {
  if (old.frames.size() != cur.frames.size() ||
      old.refs.size() != cur.refs.size())
    return false;
  IdMap ids;
  for (size_t f = 0; f < old.frames.size(); ++f) {
    const Frame &o = old.frames[f];
    const Frame &c = cur.frames[f];
    const FrameView &view = views[f];
    if (o.subprog != c.subprog || o.callsite != c.callsite ||
        o.callback != c.callback)
      return false;
    for (int r = 0; r < kNumRegs - 1; ++r) // r10 is fixed by the frame
      if ((view.live >> r) & 1)
        if (!reg_covers(o.regs[r], c.regs[r], ids, mode,
                        (view.relevant >> r) & 1))
          return false;
    if (o.callback != CallbackKind::None)
      for (size_t a = 0; a < o.callback_args.size(); ++a)
        if (!reg_covers(o.callback_args[a], c.callback_args[a], ids, mode,
                        true))
          return false;
    uint64_t live =
        live_slots && f < live_slots->size() ? (*live_slots)[f] : ~uint64_t(0);
    if (!stack_covers(o, c, ids, mode, view.relevant_slots, live))
      return false;
  }
  return true;
}

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
  return h;
}

uint64_t hash_reg(uint64_t h, const Reg &r, bool relevant) {
  h = mix(h, uint64_t(r.kind));
  if (r.kind == RegKind::Scalar && !relevant)
    return h;
  h = mix(h, uint64_t(r.frame) << 40 | uint64_t(r.map) << 8 | r.mem_size);
  h = mix(h, uint64_t(uint32_t(r.off)));
  h = mix(h, r.var.bits.value);
  h = mix(h, r.var.bits.mask);
  h = mix(h, r.var.umin);
  return mix(h, r.var.umax);
}

} // namespace

uint64_t state_fingerprint(const State &state,
                           const std::vector<FrameView> &views) {
  uint64_t h = mix(state.frames.size(), state.refs.size());
  for (size_t f = 0; f < state.frames.size(); ++f) {
    const Frame &frame = state.frames[f];
    const FrameView &view = views[f];
    h = mix(h, uint64_t(frame.subprog) << 32 | uint32_t(frame.callsite));
    for (int r = 0; r < kNumRegs - 1; ++r)
      if ((view.live >> r) & 1)
        h = hash_reg(h, frame.regs[r], (view.relevant >> r) & 1);
    for (size_t i = 0; i < frame.stack.size(); ++i) {
      const StackSlot &slot = frame.stack[i];
      bool relevant = (view.relevant_slots >> i) & 1;
      for (size_t b = 0; b < 8; ++b) {
        ByteClass c = classify(slot.bytes[b], slot.spill);
        h = mix(h, relevant ? uint64_t(slot.bytes[b]) << 8 | slot.known[b]
                            : uint64_t(c));
      }
      if (slot.has_spill() && (relevant || slot.spill.is_pointer()))
        h = hash_reg(h, slot.spill, true);
    }
  }
  return h;
}

bool may_cover(const State &old, const State &cur, const FrameView &view) {
  if (old.frames.size() != cur.frames.size())
    return false;
  const Frame &o = old.top();
  const Frame &c = cur.top();
  for (int r = 0; r < kNumRegs - 1; ++r) {
    if (!((view.live & view.relevant) >> r & 1))
      continue;
    const Reg &a = o.regs[r];
    if (a.kind != RegKind::Scalar || !a.var.is_const())
      continue;
    const Reg &b = c.regs[r];
    if (b.kind != RegKind::Scalar || !b.var.is_const() ||
        b.var.value() != a.var.value())
      return false;
  }
  return true;
}

namespace {

void widen_reg(const Reg &prev, Reg &cur) {
  if (prev.kind == RegKind::Scalar && cur.kind == RegKind::Scalar &&
      !(prev.var == cur.var))
    cur = Reg::unknown();
}

ByteKind join(ByteKind a, ByteKind b) {
  if (a == b)
    return a;
  if (a == ByteKind::Invalid || b == ByteKind::Invalid)
    return ByteKind::Invalid;
  return ByteKind::Misc;
}

} // namespace

void widen(const State &prev, State &cur) {
  if (prev.frames.size() != cur.frames.size())
    return;
  for (size_t f = 0; f < cur.frames.size(); ++f) {
    const Frame &p = prev.frames[f];
    Frame &c = cur.frames[f];
    for (int r = 0; r < kNumRegs; ++r)
      widen_reg(p.regs[r], c.regs[r]);
    size_t n = std::max(p.stack.size(), c.stack.size());
    for (size_t i = 0; i < n; ++i) {
      const StackSlot &ps = slot_or_invalid(p, i);
      StackSlot &cs = c.slot(static_cast<uint32_t>(i));
      bool spills_agree = ps.bytes == cs.bytes && ps.has_spill() &&
                          ps.spill.kind == cs.spill.kind;
      if (spills_agree) {
        widen_reg(ps.spill, cs.spill);
        continue;
      }
      // Spills that disagree become plain initialised bytes.
      for (size_t b = 0; b < 8; ++b) {
        ByteKind pb = ps.bytes[b], cb = cs.bytes[b];
        if (pb == ByteKind::Spill || cb == ByteKind::Spill)
          cs.bytes[b] = pb == ByteKind::Invalid || cb == ByteKind::Invalid
                            ? ByteKind::Invalid
                            : ByteKind::Misc;
        else if (pb == ByteKind::Known && cb == ByteKind::Known &&
                 ps.known[b] != cs.known[b])
          cs.bytes[b] = ByteKind::Misc;
        else
          cs.bytes[b] = join(pb, cb);
        if (cs.bytes[b] != ByteKind::Known)
          cs.known[b] = 0;
      }
      cs.spill = Reg{};
    }
  }
}

} // namespace ubtrace::vm::verifier
