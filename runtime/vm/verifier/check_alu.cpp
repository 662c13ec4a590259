// ALU and ALU64: numbers through the scalar domain, pointers through the
// few operations that keep them pointers (adding/subtracting a bounded
// number, subtracting two pointers into the same object).
#include "runtime/vm/verifier/engine.h"

namespace ubtrace::vm::verifier {
namespace {

// Offsets a pointer may carry; beyond this it has escaped any object.
constexpr int64_t kMaxPointerOffset = int64_t(1) << 29;

AluOp alu_op(uint8_t op, int16_t off) {
  switch (op) {
  case BPF_ADD:
    return AluOp::Add;
  case BPF_SUB:
    return AluOp::Sub;
  case BPF_MUL:
    return AluOp::Mul;
  case BPF_DIV:
    return off == kOffSigned ? AluOp::SDiv : AluOp::Div;
  case BPF_MOD:
    return off == kOffSigned ? AluOp::SMod : AluOp::Mod;
  case BPF_OR:
    return AluOp::Or;
  case BPF_AND:
    return AluOp::And;
  case BPF_XOR:
    return AluOp::Xor;
  case BPF_LSH:
    return AluOp::Lsh;
  case BPF_RSH:
    return AluOp::Rsh;
  default:
    return AluOp::Arsh;
  }
}

const char *alu_op_name(uint8_t op) {
  switch (op) {
  case BPF_MUL:
    return "multiplication";
  case BPF_DIV:
    return "division";
  case BPF_MOD:
    return "modulo";
  case BPF_OR:
    return "bitwise or";
  case BPF_AND:
    return "bitwise and";
  case BPF_XOR:
    return "bitwise xor";
  case BPF_LSH:
  case BPF_RSH:
  case BPF_ARSH:
    return "shift";
  case BPF_NEG:
    return "negation";
  case BPF_END:
    return "byte swap";
  default:
    return "arithmetic";
  }
}

bool same_object(const Reg &a, const Reg &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case RegKind::Stack:
    return a.frame == b.frame;
  case RegKind::MapValue:
  case RegKind::MapKey:
    return a.map == b.map;
  case RegKind::Mem:
    return a.ref != 0 && a.ref == b.ref;
  case RegKind::Ctx:
    return true;
  case RegKind::NotInit:
  case RegKind::Scalar:
  case RegKind::MapPtr:
  case RegKind::MapValueOrNull:
  case RegKind::MemOrNull:
  case RegKind::Func:
    return false;
  }
  return false;
}

// ptr +/- number, written to `out`. Rejects what would escape the object's
// addressable range or lose track of which object it is.
Result<void> pointer_offset(Engine &engine, const State &state, int regno,
                            const Reg &ptr, const Scalar &delta, bool subtract,
                            Reg &out) {
  uint32_t pc = state.pc;
  std::string what = std::string(reg_kind_name(ptr.kind)) + " pointer r" +
                     std::to_string(regno);
  switch (ptr.kind) {
  case RegKind::MapPtr:
  case RegKind::Func:
    return fail_at(pc, "pointer arithmetic on " + what + " prohibited");
  case RegKind::MapValueOrNull:
  case RegKind::MemOrNull:
    return fail_at(pc, "pointer arithmetic on possibly NULL " + what +
                           " prohibited; compare it with 0 first");
  case RegKind::Ctx:
    if (!delta.is_const() && !engine.ctx().allow_variable_offset)
      return fail_at(pc, "variable offset added to ctx pointer r" +
                             std::to_string(regno) + " prohibited");
    break;
  case RegKind::Stack:
  case RegKind::MapValue:
  case RegKind::MapKey:
  case RegKind::Mem:
    break;
  case RegKind::NotInit:
  case RegKind::Scalar:
    return fail_at(pc, "internal error: not a pointer");
  }
  Reg result = ptr;
  if (delta.is_const()) {
    int64_t d = int64_t(delta.value());
    int64_t off = subtract ? int64_t(ptr.off) - d : int64_t(ptr.off) + d;
    if (off < -kMaxPointerOffset || off > kMaxPointerOffset)
      return fail_at(pc, "pointer arithmetic moves " + what +
                             " out of any object (offset " +
                             std::to_string(off) + ")");
    result.off = int32_t(off);
  } else {
    if (delta.smin < -kMaxPointerOffset || delta.smax > kMaxPointerOffset)
      return fail_at(pc, "pointer arithmetic on " + what +
                             " with unbounded value (" + delta.describe() +
                             ") prohibited");
    result.var =
        scalar_alu64(subtract ? AluOp::Sub : AluOp::Add, ptr.var, delta);
    if (result.var.smin < -kMaxPointerOffset ||
        result.var.smax > kMaxPointerOffset)
      return fail_at(pc, "pointer arithmetic leaves " + what +
                             " with an unbounded offset");
  }
  if (result.kind == RegKind::Stack) {
    int64_t lo = result.off + result.var.smin;
    int64_t hi = result.off + result.var.smax;
    if (lo < -kStackSize || hi > 0)
      return fail_at(
          pc, "stack pointer r" + std::to_string(regno) +
                  " leaves its frame (offset " +
                  (lo == hi ? std::to_string(lo)
                            : std::to_string(lo) + ".." + std::to_string(hi)) +
                  ")");
  }
  out = result;
  return {};
}

Result<void> pointer_alu(Engine &engine, State &state, const Insn &in,
                         const Reg &src) {
  uint32_t pc = state.pc;
  uint8_t op = insn_op(in.code);
  Reg &dst = state.reg(in.dst);
  int ptr_reg = dst.is_pointer() ? in.dst : in.src;
  if (insn_class(in.code) == BPF_ALU)
    return fail_at(pc, "32-bit arithmetic on pointer r" +
                           std::to_string(ptr_reg) + " prohibited");
  if (op == BPF_ADD) {
    if (dst.is_pointer() && src.is_pointer())
      return fail_at(pc, "adding two pointers (r" + std::to_string(in.dst) +
                             " += r" + std::to_string(in.src) + ") prohibited");
    if (dst.is_pointer())
      return pointer_offset(engine, state, in.dst, dst, src.var, false, dst);
    Reg sum;
    auto r = pointer_offset(engine, state, in.src, src, dst.var, false, sum);
    if (r)
      dst = sum;
    return r;
  }
  if (op == BPF_SUB) {
    if (!dst.is_pointer())
      return fail_at(pc, "subtracting pointer r" + std::to_string(in.src) +
                             " from a number prohibited");
    if (!src.is_pointer())
      return pointer_offset(engine, state, in.dst, dst, src.var, true, dst);
    if (!same_object(dst, src))
      return fail_at(pc, "subtracting pointers into different objects (r" +
                             std::to_string(in.dst) + " -= r" +
                             std::to_string(in.src) + ") prohibited");
    Scalar a = scalar_alu64(
        AluOp::Add, Scalar::constant(uint64_t(int64_t(dst.off))), dst.var);
    Scalar b = scalar_alu64(
        AluOp::Add, Scalar::constant(uint64_t(int64_t(src.off))), src.var);
    dst = Reg::scalar(scalar_alu64(AluOp::Sub, a, b));
    return {};
  }
  return fail_at(pc, std::string(alu_op_name(op)) + " on pointer r" +
                         std::to_string(ptr_reg) + " prohibited");
}

Result<void> check_mov(Engine &engine, State &state, const Insn &in) {
  bool is64 = insn_class(in.code) == BPF_ALU64;
  Reg &dst = state.reg(in.dst);
  if (insn_source(in.code) == BPF_K) {
    uint64_t v = is64 ? uint64_t(int64_t(in.imm)) : uint32_t(in.imm);
    dst = Reg::scalar(Scalar::constant(v));
    return {};
  }
  if (auto r = engine.check_readable(state, in.src); !r)
    return r;
  Reg &src = state.reg(in.src);
  if (in.off != 0) { // movsx
    if (src.is_pointer())
      return fail_at(state.pc, "sign-extending move of pointer r" +
                                   std::to_string(in.src) + " prohibited");
    Scalar v = src.var.sign_extended(in.off);
    dst = Reg::scalar(is64 ? v : v.zext32());
    return {};
  }
  if (src.kind != RegKind::Scalar) {
    // A 32-bit copy of a pointer keeps half an address: just a number.
    dst = is64 ? src : Reg::scalar(Scalar::of_bytes(4));
    return {};
  }
  // Copies share an id so a bound learnt on one holds for all.
  bool same_value = is64 || src.var.umax <= 0xffffffffu;
  if (!same_value) {
    dst = Reg::scalar(src.var.zext32());
    return {};
  }
  if (src.id == 0)
    src.id = engine.new_id();
  dst = src;
  return {};
}

} // namespace

Result<Step> check_alu(Engine &engine, State &state, const Insn &in) {
  uint32_t pc = state.pc;
  bool is64 = insn_class(in.code) == BPF_ALU64;
  uint8_t op = insn_op(in.code);
  if (op == BPF_MOV) {
    if (auto r = check_mov(engine, state, in); !r)
      return std::move(r).take_error();
    ++state.pc;
    return Step::Continue;
  }
  if (auto r = engine.check_readable(state, in.dst); !r)
    return std::move(r).take_error();
  Reg &dst = state.reg(in.dst);
  if (op == BPF_NEG || op == BPF_END) {
    if (dst.is_pointer())
      return fail_at(pc, std::string(alu_op_name(op)) + " on pointer r" +
                             std::to_string(in.dst) + " prohibited");
    Scalar v;
    if (op == BPF_NEG) {
      v = is64 ? scalar_alu64(AluOp::Sub, Scalar::constant(0), dst.var)
               : scalar_alu32(AluOp::Sub, Scalar::constant(0), dst.var);
    } else {
      EndianOp kind = is64                            ? EndianOp::Swap
                      : insn_source(in.code) == BPF_X ? EndianOp::ToBe
                                                      : EndianOp::ToLe;
      v = scalar_endian(kind, in.imm, dst.var);
    }
    dst = Reg::scalar(v);
    ++state.pc;
    return Step::Continue;
  }
  Reg src;
  if (insn_source(in.code) == BPF_X) {
    if (auto r = engine.check_readable(state, in.src); !r)
      return std::move(r).take_error();
    src = state.reg(in.src);
  } else {
    src = Reg::scalar(
        Scalar::constant(is64 ? uint64_t(int64_t(in.imm)) : uint32_t(in.imm)));
  }
  if (dst.is_pointer() || src.is_pointer()) {
    if (auto r = pointer_alu(engine, state, in, src); !r)
      return std::move(r).take_error();
    ++state.pc;
    return Step::Continue;
  }
  AluOp aop = alu_op(op, in.off);
  dst = Reg::scalar(is64 ? scalar_alu64(aop, dst.var, src.var)
                         : scalar_alu32(aop, dst.var, src.var));
  ++state.pc;
  return Step::Continue;
}

} // namespace ubtrace::vm::verifier
