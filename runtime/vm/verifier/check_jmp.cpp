// JMP and JMP32 (conditional and unconditional jumps; calls and exits live in
// check_call.cpp). A condition narrows the registers it compares on each
// branch, and a branch the state rules out is not explored: that is what
// bounds loops whose counters are compared with constants.
#include "runtime/vm/verifier/engine.h"

namespace ubtrace::vm::verifier {
namespace {

Relation relation(uint8_t op) {
  switch (op) {
  case BPF_JEQ:
    return Relation::Eq;
  case BPF_JNE:
    return Relation::Ne;
  case BPF_JGT:
    return Relation::Ugt;
  case BPF_JGE:
    return Relation::Uge;
  case BPF_JLT:
    return Relation::Ult;
  case BPF_JLE:
    return Relation::Ule;
  case BPF_JSGT:
    return Relation::Sgt;
  case BPF_JSGE:
    return Relation::Sge;
  case BPF_JSLT:
    return Relation::Slt;
  case BPF_JSLE:
    return Relation::Sle;
  default:
    return Relation::Set;
  }
}

bool holds(Relation rel, int64_t a, int64_t b) {
  switch (rel) {
  case Relation::Eq:
    return a == b;
  case Relation::Ne:
    return a != b;
  case Relation::Ugt:
  case Relation::Sgt:
    return a > b;
  case Relation::Uge:
  case Relation::Sge:
    return a >= b;
  case Relation::Ult:
  case Relation::Slt:
    return a < b;
  case Relation::Ule:
  case Relation::Sle:
    return a <= b;
  case Relation::Set:
    return (a & b) != 0;
  case Relation::NotSet:
    return (a & b) == 0;
  }
  return false;
}

// What each branch learns: per branch, whether it is possible, and the
// registers to overwrite on it.
struct Outcome {
  bool possible = true;
  Reg dst, src;
};

// Registers sharing `id` get `value` (copies learn together).
void propagate(State &state, uint32_t id, const Scalar &value) {
  if (id == 0)
    return;
  for_each_reg(state, [&](Reg &r) {
    if (r.kind == RegKind::Scalar && r.id == id)
      r.var = value;
  });
}

// A NULL check on a *_or_null pointer settles every copy of it.
void settle_null(State &state, uint32_t id, uint32_t ref, bool is_null) {
  for_each_reg(state, [&](Reg &r) {
    if (r.id != id ||
        (r.kind != RegKind::MapValueOrNull && r.kind != RegKind::MemOrNull))
      return;
    if (is_null)
      r = Reg::scalar(Scalar::constant(0));
    else
      r.kind =
          r.kind == RegKind::MapValueOrNull ? RegKind::MapValue : RegKind::Mem;
  });
  if (is_null && ref)
    std::erase_if(state.refs, [&](const RefEntry &e) { return e.id == ref; });
}

bool nullable(const Reg &r) {
  return r.kind == RegKind::MapValueOrNull || r.kind == RegKind::MemOrNull;
}

void apply(State &state, const Insn &in, const Outcome &o, const Reg &dst,
           const Reg &src) {
  bool reg_src = insn_source(in.code) == BPF_X;
  if (dst.kind == RegKind::Scalar) {
    state.reg(in.dst).var = o.dst.var;
    propagate(state, dst.id, o.dst.var);
  }
  if (reg_src && src.kind == RegKind::Scalar) {
    state.reg(in.src).var = o.src.var;
    propagate(state, src.id, o.src.var);
  }
}

} // namespace

Result<Step> check_jmp(Engine &engine, State &state, const Insn &in) {
  uint32_t pc = state.pc;
  int64_t target = jump_target(in, pc);
  uint8_t op = insn_op(in.code);
  if (op == BPF_JA) {
    if (target <= int64_t(pc)) {
      engine.count_back_edge(pc);
      state.last_back_edge = int32_t(pc);
    }
    state.pc = uint32_t(target);
    return Step::Continue;
  }
  bool is32 = insn_class(in.code) == BPF_JMP32;
  bool reg_src = insn_source(in.code) == BPF_X;
  if (auto r = engine.check_readable(state, in.dst); !r)
    return std::move(r).take_error();
  if (reg_src)
    if (auto r = engine.check_readable(state, in.src); !r)
      return std::move(r).take_error();
  Reg dst = state.reg(in.dst);
  Reg src = reg_src ? state.reg(in.src)
                    : Reg::scalar(Scalar::constant(
                          is32 ? uint32_t(in.imm) : uint64_t(int64_t(in.imm))));
  Relation rel = relation(op);
  Outcome taken{true, dst, src}, fallthrough{true, dst, src};
  // How a NULL check resolves, if this is one.
  const Reg *checked = nullptr;
  if (!is32 && (rel == Relation::Eq || rel == Relation::Ne)) {
    if (nullable(dst) && src.is_null_const())
      checked = &dst;
    else if (nullable(src) && dst.is_null_const())
      checked = &src;
  }
  if (dst.kind == RegKind::Scalar && src.kind == RegKind::Scalar) {
    auto refine = is32 ? refine32 : refine64;
    taken.possible = refine(rel, taken.dst.var, taken.src.var);
    fallthrough.possible =
        refine(negate(rel), fallthrough.dst.var, fallthrough.src.var);
  } else if (!checked && !is32 &&
             (rel == Relation::Eq || rel == Relation::Ne) &&
             ((dst.is_pointer() && !nullable(dst) && src.is_null_const()) ||
              (src.is_pointer() && !nullable(src) && dst.is_null_const()))) {
    // A pointer that cannot be NULL never equals 0.
    bool equal_possible = false;
    taken.possible = rel == Relation::Eq ? equal_possible : true;
    fallthrough.possible = rel == Relation::Eq ? true : equal_possible;
  } else if (!is32 && rel != Relation::Set && dst.is_pointer() &&
             src.is_pointer() && dst.kind == src.kind &&
             dst.frame == src.frame && dst.map == src.map &&
             dst.ref == src.ref && dst.var.is_const() && src.var.is_const() &&
             !nullable(dst) && dst.kind != RegKind::MapPtr &&
             dst.kind != RegKind::Func) {
    // Two fixed offsets into one object compare like the offsets.
    bool result = holds(rel, dst.off + int64_t(dst.var.value()),
                        src.off + int64_t(src.var.value()));
    taken.possible = result;
    fallthrough.possible = !result;
  }

  auto go = [&](State &s, const Outcome &o, bool is_taken) {
    apply(s, in, o, dst, src);
    if (checked) {
      bool null_branch = (rel == Relation::Eq) == is_taken;
      settle_null(s, checked->id, checked->ref, null_branch);
    }
    s.pc = is_taken ? uint32_t(target) : pc + 1;
  };
  if (taken.possible && fallthrough.possible) {
    State other = state;
    go(other, taken, true);
    engine.push_branch(std::move(other), pc);
    go(state, fallthrough, false);
    return Step::Continue;
  }
  if (taken.possible) {
    go(state, taken, true);
    if (target <= int64_t(pc)) {
      engine.count_back_edge(pc);
      state.last_back_edge = int32_t(pc);
    }
    return Step::Continue;
  }
  if (fallthrough.possible) {
    go(state, fallthrough, false);
    return Step::Continue;
  }
  return Step::Done; // no value reaches here: the path is dead
}

} // namespace ubtrace::vm::verifier
