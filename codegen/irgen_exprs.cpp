// Expressions other than calls.
#include "codegen/irgen.h"

#include <cstring>
#include <linux/bpf.h>

namespace ubtrace::codegen {

using namespace ast;

namespace {
// bpftrace compares (and folds constants) signed when either side is signed.
bool either_signed(const Type &a, const Type &b) {
  auto s = [](const Type &t) {
    return (t.is_int() && t.is_signed) ||
           ((t.kind == TypeKind::Sum || t.kind == TypeKind::Min ||
             t.kind == TypeKind::Max || t.kind == TypeKind::Avg) &&
            t.agg_signed);
  };
  return s(a) || s(b);
}
} // namespace

llvm::Value *IRGen::probe_read(llvm::Value *dst, uint32_t size,
                               llvm::Value *src, const ast::Location *loc) {
  auto *ret = helper(BPF_FUNC_probe_read_user, i64t(), {dst, i64(size), src});
  if (loc) {
    // Helpers return an int: its sign says whether the read failed.
    auto *rc = b_.CreateSExt(b_.CreateTrunc(ret, b_.getInt32Ty()), i64t());
    check_helper(b_.CreateICmpSLT(rc, i64(0)), rc, BPF_FUNC_probe_read_user,
                 "probe_read_user", *loc);
  }
  return ret;
}

void IRGen::check_helper(llvm::Value *failed, llvm::Value *retcode,
                         int32_t helper_id, const char *name,
                         const ast::Location &loc) {
  // GPU probes have no -k: their reads are bounded device loads.
  if (!opts_.helper_errors || gpu_)
    return;
  uint64_t id = bundle_.helper_checks.size();
  bundle_.helper_checks.push_back({helper_id, name, sites_of(loc)});
  auto *report = block("helper.failed");
  auto *done = block("helper.ok");
  b_.CreateCondBr(failed, report, done);
  b_.SetInsertPoint(report);
  gen_simple_event(abi::EventType::HelperError, id, {retcode});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

Val IRGen::gen_string_literal(const std::string &s, uint32_t size) {
  size = std::max<uint32_t>(size, s.size() + 1);
  auto *slot = entry_alloca(size, "str");
  std::string bytes = s;
  bytes.resize(size, '\0');
  uint32_t off = 0;
  for (; off + 8 <= size; off += 8) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, bytes.data() + off, 8);
    b_.CreateAlignedStore(i64(chunk), byte_ptr(slot, off), llvm::Align(1));
  }
  for (; off < size; off++)
    b_.CreateStore(b_.getInt8(static_cast<uint8_t>(bytes[off])),
                   byte_ptr(slot, off));
  return {slot, true};
}

llvm::Value *IRGen::gen_scalar(Expr *e) {
  Val v = gen(e);
  if (!v.mem)
    return v.v;
  return load_int(v.v, storage_type(e->type));
}

llvm::Value *IRGen::gen_cond(Expr *e) {
  return b_.CreateICmpNE(gen_scalar(e), i64(0));
}

Val IRGen::gen(Expr *e) {
  switch (e->kind) {
  case NodeKind::Integer: {
    auto *i = static_cast<Integer *>(e);
    return {i64(static_cast<uint64_t>(i->as_signed())), false};
  }
  case NodeKind::Boolean:
    return {i64(static_cast<Boolean *>(e)->value ? 1 : 0), false};
  case NodeKind::String: {
    auto *s = static_cast<String *>(e);
    return gen_string_literal(s->value, e->type.size);
  }
  case NodeKind::PositionalParam: {
    auto *p = static_cast<PositionalParam *>(e);
    std::string v =
        p->n >= 1 && p->n <= static_cast<int>(ast_.positional.size())
            ? ast_.positional[p->n - 1]
            : "";
    if (e->type.kind == TypeKind::String)
      return gen_string_literal(v, e->type.size);
    // Past INT64_MAX (0xffffffffffffffff) a parameter is unsigned.
    uint64_t n =
        v.empty() ? 0
        : v[0] == '-'
            ? static_cast<uint64_t>(std::strtoll(v.c_str(), nullptr, 0))
            : std::strtoull(v.c_str(), nullptr, 0);
    return {i64(n), false};
  }
  case NodeKind::PositionalCount:
    return {i64(ast_.positional.size()), false};
  case NodeKind::Identifier:
    return gen_identifier(*static_cast<Identifier *>(e));
  case NodeKind::Variable: {
    auto *v = static_cast<Variable *>(e);
    auto *slot = var_slot(v->name);
    if (!slot) {
      fail(e->loc, "BUG: no storage for variable " + v->name);
      return {i64(0), false};
    }
    Type t = var_types_[v->name];
    if (is_scalar(t) || t.kind == TypeKind::Boolean)
      return {load_int(slot, t), false};
    return {slot, true};
  }
  case NodeKind::Map:
    return gen_map_read(*static_cast<Map *>(e));
  case NodeKind::Call:
    return gen_call(*static_cast<Call *>(e));
  case NodeKind::Binop:
    return gen_binop(*static_cast<Binop *>(e));
  case NodeKind::Unop:
    return gen_unop(*static_cast<Unop *>(e));
  case NodeKind::Ternary:
    return gen_ternary(*static_cast<Ternary *>(e));
  case NodeKind::FieldAccess:
    return gen_field(*static_cast<FieldAccess *>(e));
  case NodeKind::ArrayAccess:
    return gen_index(*static_cast<ArrayAccess *>(e));
  case NodeKind::Cast:
    return gen_cast(*static_cast<Cast *>(e));
  case NodeKind::Tuple:
    return gen_tuple(*e, static_cast<Tuple *>(e)->elems);
  case NodeKind::Record:
    return gen_tuple(*e, static_cast<Record *>(e)->elems);
  case NodeKind::BlockExpr: {
    auto *be = static_cast<BlockExpr *>(e);
    for (auto *s : be->block->stmts)
      gen_stmt(s);
    if (!be->block->value)
      return {i64(0), false};
    // Statements may have ended the block (return): keep emitting into a
    // fresh unreachable block so callers can continue.
    if (b_.GetInsertBlock()->getTerminator())
      b_.SetInsertPoint(block("dead"));
    return gen(be->block->value);
  }
  case NodeKind::Sizeof:
    return {i64(static_cast<Sizeof *>(e)->value), false};
  case NodeKind::Offsetof:
    return {i64(static_cast<Offsetof *>(e)->value), false};
  default:
    fail(e->loc, "BUG: cannot generate code for this expression");
    return {i64(0), false};
  }
}

llvm::Value *IRGen::gen_memcmp_eq(llvm::Value *a, llvm::Value *bp,
                                  uint32_t size, bool strings) {
  // Byte by byte; strings stop at their NUL. Returns an i1.
  auto *res = entry_alloca(8, "cmp");
  b_.CreateAlignedStore(i64(1), res, llvm::Align(8));
  auto *done = block("cmp.done");
  for (uint32_t i = 0; i < size; i++) {
    auto *ca = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(a, i));
    auto *cb = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(bp, i));
    auto *ne = block("cmp.ne");
    auto *next = block("cmp.next");
    b_.CreateCondBr(b_.CreateICmpNE(ca, cb), ne, next);
    b_.SetInsertPoint(ne);
    b_.CreateAlignedStore(i64(0), res, llvm::Align(8));
    b_.CreateBr(done);
    b_.SetInsertPoint(next);
    if (strings) {
      auto *cont = block("cmp.cont");
      b_.CreateCondBr(b_.CreateICmpEQ(ca, b_.getInt8(0)), done, cont);
      b_.SetInsertPoint(cont);
    }
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return b_.CreateICmpNE(b_.CreateAlignedLoad(i64t(), res, llvm::Align(8)),
                         i64(0));
}

Val IRGen::gen_binop(Binop &e) {
  if (binop_is_logical(e.op)) {
    // Short circuit.
    auto *lhs = gen_cond(e.left);
    auto *from = b_.GetInsertBlock();
    auto *rhs_bb = block("logic.rhs");
    auto *done = block("logic.done");
    if (e.op == BinOp::LogAnd)
      b_.CreateCondBr(lhs, rhs_bb, done);
    else
      b_.CreateCondBr(lhs, done, rhs_bb);
    b_.SetInsertPoint(rhs_bb);
    auto *rhs = gen_cond(e.right);
    auto *from_rhs = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    auto *phi = b_.CreatePHI(b_.getInt1Ty(), 2);
    phi->addIncoming(b_.getInt1(e.op == BinOp::LogOr), from);
    phi->addIncoming(rhs, from_rhs);
    return {b_.CreateZExt(phi, i64t()), false};
  }

  Type lt = e.left->type, rt = e.right->type;
  bool eq = e.op == BinOp::Eq || e.op == BinOp::Ne;
  if (eq && !is_scalar(lt) && lt.kind != TypeKind::Boolean) {
    Val a = gen(e.left), bv = gen(e.right);
    llvm::Value *same;
    if (lt.kind == TypeKind::String) {
      uint32_t n = std::min(lt.size, rt.size);
      same = gen_memcmp_eq(a.v, bv.v, n, true);
      if (lt.size != rt.size) {
        // The longer one must end where the shorter one does.
        const auto &longer = lt.size > rt.size ? a : bv;
        auto *tail = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(longer.v, n));
        auto *shorter_ended = b_.CreateICmpEQ(
            b_.CreateLoad(b_.getInt8Ty(),
                          byte_ptr(lt.size > rt.size ? bv.v : a.v, n - 1)),
            b_.getInt8(0));
        same = b_.CreateAnd(
            same,
            b_.CreateOr(shorter_ended, b_.CreateICmpEQ(tail, b_.getInt8(0))));
      }
    } else {
      Type c = common_type(lt, rt);
      if (c.is_none())
        c = lt;
      auto *x = entry_alloca(c.size, "cmpa");
      auto *y = entry_alloca(c.size, "cmpb");
      zero(x, c.size);
      zero(y, c.size);
      store_value(x, c, a, lt);
      store_value(y, c, bv, rt);
      same = gen_memcmp_eq(x, y, c.size, false);
    }
    if (e.op == BinOp::Ne)
      same = b_.CreateNot(same);
    return {b_.CreateZExt(same, i64t()), false};
  }

  auto *l = gen_scalar(e.left);
  auto *r = gen_scalar(e.right);
  bool sign = either_signed(lt, rt);
  // Literals adopt the other side's signedness.
  if (isa<Integer>(e.left) && !static_cast<Integer *>(e.left)->negative)
    sign = rt.is_int() && rt.is_signed;
  if (isa<Integer>(e.right) && !static_cast<Integer *>(e.right)->negative)
    sign = lt.is_int() ? lt.is_signed : sign;
  if ((isa<Integer>(e.left) && static_cast<Integer *>(e.left)->negative) ||
      (isa<Integer>(e.right) && static_cast<Integer *>(e.right)->negative))
    sign = true;

  auto cmp = [&](llvm::CmpInst::Predicate p) -> Val {
    return {b_.CreateZExt(b_.CreateICmp(p, l, r), i64t()), false};
  };
  using P = llvm::CmpInst::Predicate;
  bool lp = lt.kind == TypeKind::Pointer, rp = rt.kind == TypeKind::Pointer;
  auto elem_size = [](const Type &t) -> uint64_t {
    return t.elem && t.elem->size ? t.elem->size : 1;
  };
  switch (e.op) {
  case BinOp::Eq:
    return cmp(P::ICMP_EQ);
  case BinOp::Ne:
    return cmp(P::ICMP_NE);
  case BinOp::Lt:
    return cmp(sign ? P::ICMP_SLT : P::ICMP_ULT);
  case BinOp::Le:
    return cmp(sign ? P::ICMP_SLE : P::ICMP_ULE);
  case BinOp::Gt:
    return cmp(sign ? P::ICMP_SGT : P::ICMP_UGT);
  case BinOp::Ge:
    return cmp(sign ? P::ICMP_SGE : P::ICMP_UGE);
  case BinOp::Add:
    if (lp != rp) {
      // Pointer arithmetic scales by the pointee, as in C.
      auto *scaled = b_.CreateMul(lp ? r : l, i64(elem_size(lp ? lt : rt)));
      return {b_.CreateAdd(lp ? l : r, scaled), false};
    }
    return {b_.CreateAdd(l, r), false};
  case BinOp::Sub:
    if (lp && rp)
      return {b_.CreateSDiv(b_.CreateSub(l, r), i64(elem_size(lt))), false};
    if (lp)
      return {b_.CreateSub(l, b_.CreateMul(r, i64(elem_size(lt)))), false};
    return {b_.CreateSub(l, r), false};
  case BinOp::Mul:
    return {b_.CreateMul(l, r), false};
  case BinOp::Div:
  case BinOp::Mod:
    return {gen_division(e, l, r, sign), false};
  case BinOp::BitAnd:
    return {b_.CreateAnd(l, r), false};
  case BinOp::BitOr:
    return {b_.CreateOr(l, r), false};
  case BinOp::BitXor:
    return {b_.CreateXor(l, r), false};
  case BinOp::Shl:
    return {b_.CreateShl(l, b_.CreateAnd(r, i64(63))), false};
  case BinOp::Shr: {
    auto *amount = b_.CreateAnd(r, i64(63));
    // bpftrace shifts right logically at run time, signed or not; only its
    // literal folding (constants here) shifts arithmetically.
    bool s = lt.is_int() && lt.is_signed && both_constant(l, r);
    return {s ? b_.CreateAShr(l, amount) : b_.CreateLShr(l, amount), false};
  }
  case BinOp::LogAnd:
  case BinOp::LogOr:
    break;
  }
  return {i64(0), false};
}

bool IRGen::both_constant(llvm::Value *a, llvm::Value *b) {
  return llvm::isa<llvm::ConstantInt>(a) && llvm::isa<llvm::ConstantInt>(b);
}

// bpftrace 0.26 divides at run time with unsigned instructions even when an
// operand is signed (BPF has no signed division; it warns when compiling),
// and x / 0 and x % 0 give 1 with a runtime warning. Constant operands fold
// with C's signed semantics, as bpftrace's literal folding does.
llvm::Value *IRGen::gen_division(Binop &e, llvm::Value *l, llvm::Value *r,
                                 bool sign) {
  bool div = e.op == BinOp::Div;
  if (both_constant(l, r) && !llvm::cast<llvm::ConstantInt>(r)->isZero()) {
    if (div)
      return sign ? b_.CreateSDiv(l, r) : b_.CreateUDiv(l, r);
    return sign ? b_.CreateSRem(l, r) : b_.CreateURem(l, r);
  }
  auto *by_zero = block("div.by_zero");
  auto *nonzero = block("div.nonzero");
  auto *done = block("div.done");
  b_.CreateCondBr(b_.CreateICmpEQ(r, i64(0)), by_zero, nonzero);
  b_.SetInsertPoint(by_zero);
  runtime::FormatSpec spec = located_format(
      e.loc, "Divide or modulo by 0 detected. This can lead to "
             "unexpected results. 1 is being used as the result.");
  uint64_t id = bundle_.printf_formats.size();
  bundle_.printf_formats.push_back(spec);
  gen_simple_event(abi::EventType::Warnf, id);
  auto *from_zero = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(nonzero);
  auto *q = div ? b_.CreateUDiv(l, r) : b_.CreateURem(l, r);
  auto *from_nonzero = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(i64t(), 2);
  phi->addIncoming(i64(1), from_zero);
  phi->addIncoming(q, from_nonzero);
  return phi;
}

llvm::Value *IRGen::signed_div(llvm::Value *l, llvm::Value *r) {
  auto *lneg = b_.CreateICmpSLT(l, i64(0));
  auto *rneg = b_.CreateICmpSLT(r, i64(0));
  auto *la = b_.CreateSelect(lneg, b_.CreateNeg(l), l);
  auto *ra = b_.CreateSelect(rneg, b_.CreateNeg(r), r);
  auto *q = b_.CreateUDiv(la, ra);
  return b_.CreateSelect(b_.CreateXor(lneg, rneg), b_.CreateNeg(q), q);
}

Val IRGen::gen_unop(Unop &e) {
  switch (e.op) {
  case UnOp::Neg:
    return {b_.CreateNeg(gen_scalar(e.expr)), false};
  case UnOp::LogNot:
    return {b_.CreateZExt(b_.CreateICmpEQ(gen_scalar(e.expr), i64(0)), i64t()),
            false};
  case UnOp::BitNot:
    return {b_.CreateNot(gen_scalar(e.expr)), false};
  case UnOp::Deref: {
    auto *p = gen_scalar(e.expr);
    Type t = storage_type(e.type);
    uint32_t size = std::max<uint32_t>(t.size, 1);
    auto *dst = entry_alloca(std::max<uint32_t>(size, 8), "deref");
    zero(dst, std::max<uint32_t>(size, 8));
    // GPU probes too: the NVPTX target turns the checked read into a
    // bounded device load (runtime/jit/nvptx_target.h).
    probe_read(dst, size, b_.CreateIntToPtr(p, ptrt()), &e.expr->loc);
    if (is_scalar(t) || t.kind == TypeKind::Boolean)
      return {load_int(dst, t), false};
    return {dst, true};
  }
  case UnOp::AddrOf: {
    if (auto *v = dyn_cast<Variable>(e.expr))
      return {b_.CreatePtrToInt(var_slot(v->name), i64t()), false};
    if (isa<PositionalParam>(e.expr)) {
      // A string parameter's text, on the probe's stack (semantic: only
      // in pointer arithmetic).
      Val s = gen(e.expr);
      return {b_.CreatePtrToInt(s.v, i64t()), false};
    }
    fail(e.loc, "taking the address of a map value is not supported");
    return {i64(0), false};
  }
  case UnOp::PreInc:
  case UnOp::PreDec:
  case UnOp::PostInc:
  case UnOp::PostDec:
    return gen_incdec(e);
  }
  return {i64(0), false};
}

Val IRGen::gen_ternary(Ternary &e) {
  auto *cond = gen_cond(e.cond);
  auto *then_bb = block("tern.then");
  auto *else_bb = block("tern.else");
  auto *done = block("tern.done");
  b_.CreateCondBr(cond, then_bb, else_bb);
  Type t = storage_type(e.type);
  bool scalar =
      is_scalar(t) || t.kind == TypeKind::Boolean || t.kind == TypeKind::Void;
  llvm::Value *slot = scalar ? nullptr : entry_alloca(t.size, "tern");
  b_.SetInsertPoint(then_bb);
  Val a = gen(e.left);
  llvm::Value *av = nullptr;
  if (scalar)
    av = a.mem ? load_int(a.v, storage_type(e.left->type)) : a.v;
  else
    store_value(slot, t, a, e.left->type);
  auto *from_then = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(else_bb);
  Val bv = gen(e.right);
  llvm::Value *bvv = nullptr;
  if (scalar)
    bvv = bv.mem ? load_int(bv.v, storage_type(e.right->type)) : bv.v;
  else
    store_value(slot, t, bv, e.right->type);
  auto *from_else = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  if (!scalar)
    return {slot, true};
  auto *phi = b_.CreatePHI(i64t(), 2);
  phi->addIncoming(av, from_then);
  phi->addIncoming(bvv, from_else);
  return {phi, false};
}

// A GPU dim3 builtin's component read straight from its special register.
static int gpu_dim_helper(const std::string &builtin,
                          const std::string &field) {
  int axis = field == "x" ? 0 : field == "y" ? 1 : field == "z" ? 2 : -1;
  if (axis < 0)
    return -1;
  int base = builtin == "threadIdx"  ? abi::kHelperGpuThreadIdxX
             : builtin == "blockIdx" ? abi::kHelperGpuBlockIdxX
             : builtin == "blockDim" ? abi::kHelperGpuBlockDimX
             : builtin == "gridDim"  ? abi::kHelperGpuGridDimX
                                     : -1;
  return base < 0 ? -1 : base + axis;
}

Val IRGen::gen_field(FieldAccess &e) {
  if (auto *id = dyn_cast<Identifier>(e.expr); id && e.index < 0) {
    int h = gpu_dim_helper(id->name, e.field);
    if (h >= 0)
      return {helper(h, i64t(), {}), false};
  }
  Type base = e.expr->type;
  Type field_type = storage_type(e.type);
  const Field *f = nullptr;
  Type container = base;
  while (container.kind == TypeKind::Pointer && container.elem)
    container = *container.elem;
  if (container.kind == TypeKind::CStruct && container.fields.empty()) {
    auto it = ast_.c_types.records.find(container.name);
    if (it != ast_.c_types.records.end())
      container = it->second;
  }
  if (e.index >= 0)
    f = &container.fields.at(e.index);
  else
    f = container.field(e.field);
  if (!f) {
    fail(e.loc, "BUG: unknown field");
    return {i64(0), false};
  }
  uint32_t size = std::max<uint32_t>(field_type.size, 1);
  auto finish = [&](llvm::Value *mem) -> Val {
    if (f->bitfield_bits) {
      auto *raw = load_int(mem, make_int(f->type->size, false));
      auto *v = b_.CreateLShr(raw, i64(f->bitfield_shift));
      v = b_.CreateAnd(v, i64((f->bitfield_bits >= 64)
                                  ? ~0ull
                                  : ((1ull << f->bitfield_bits) - 1)));
      return {v, false};
    }
    if (is_scalar(field_type) || field_type.kind == TypeKind::Boolean)
      return {load_int(mem, field_type), false};
    return {mem, true};
  };
  if (base.kind == TypeKind::Pointer) {
    // Through a pointer: read the field from the traced process's memory.
    auto *p = gen_scalar(e.expr);
    auto *addr = b_.CreateIntToPtr(b_.CreateAdd(p, i64(f->offset)), ptrt());
    uint32_t read = f->bitfield_bits ? f->type->size : size;
    auto *dst = entry_alloca(std::max<uint32_t>(read, 8), "field");
    zero(dst, std::max<uint32_t>(read, 8));
    probe_read(dst, read, addr, &e.expr->loc);
    return finish(dst);
  }
  Val v = gen(e.expr);
  llvm::Value *mem = to_mem(v, base);
  return finish(byte_ptr(mem, f->offset));
}

Val IRGen::read_element(llvm::Value *base, llvm::Value *idx, uint32_t esize,
                        const Type &elem, const Location &loc) {
  auto *addr = b_.CreateIntToPtr(
      b_.CreateAdd(base, b_.CreateMul(idx, i64(esize))), ptrt());
  auto *dst = entry_alloca(std::max<uint32_t>(esize, 8), "elem");
  zero(dst, std::max<uint32_t>(esize, 8));
  probe_read(dst, esize, addr, &loc);
  if (is_scalar(elem) || elem.kind == TypeKind::Boolean)
    return {load_int(dst, elem), false};
  return {dst, true};
}

Val IRGen::gen_index(ArrayAccess &e) {
  Type base = e.expr->type;
  Type elem = storage_type(e.type);
  uint32_t esize = std::max<uint32_t>(elem.size, 1);
  if (base.kind == TypeKind::Tuple) {
    int64_t idx = e.tuple_index;
    Val v = gen(e.expr);
    const auto &f = base.fields.at(idx);
    auto *mem = byte_ptr(to_mem(v, base), f.offset);
    if (is_scalar(elem) || elem.kind == TypeKind::Boolean)
      return {load_int(mem, elem), false};
    return {mem, true};
  }
  auto *idx = gen_scalar(e.index);
  if (base.kind == TypeKind::Array && base.count == 0) {
    // A flexible array member, through a pointer (semantic analysis made
    // sure): its elements follow the record's fixed part in memory.
    auto &fa = static_cast<FieldAccess &>(*e.expr);
    Type rec = fa.expr->type;
    while (rec.kind == TypeKind::Pointer && rec.elem)
      rec = *rec.elem;
    if (rec.fields.empty())
      if (auto it = ast_.c_types.records.find(rec.name);
          it != ast_.c_types.records.end())
        rec = it->second;
    const Field *f =
        fa.index >= 0 ? &rec.fields.at(fa.index) : rec.field(fa.field);
    return read_element(
        b_.CreateAdd(gen_scalar(fa.expr), i64(f ? f->offset : 0)), idx, esize,
        elem, e.expr->loc);
  }
  if (base.kind == TypeKind::Pointer)
    return read_element(gen_scalar(e.expr), idx, esize, elem, e.expr->loc);
  // An array or string in memory: out-of-range indexes read zero.
  uint32_t count = base.kind == TypeKind::Array ? base.count : base.size;
  Val v = gen(e.expr);
  auto *mem = to_mem(v, base);
  auto *out = entry_alloca(std::max<uint32_t>(esize, 8), "elem");
  zero(out, std::max<uint32_t>(esize, 8));
  auto *in = block("index.in");
  auto *done = block("index.done");
  if (llvm::isa<llvm::ConstantInt>(idx)) {
    b_.CreateCondBr(b_.CreateICmpULT(idx, i64(count)), in, done);
  } else {
    // An index known only at run time warns when it misses, as bpftrace
    // does (a literal one is refused when checking).
    auto *oob = block("index.oob");
    b_.CreateCondBr(b_.CreateICmpULT(idx, i64(count)), in, oob);
    b_.SetInsertPoint(oob);
    uint64_t id = bundle_.printf_formats.size();
    bundle_.printf_formats.push_back(located_format(
        e.loc,
        "Array access out of bounds. This can lead to unexpected results."));
    gen_simple_event(abi::EventType::Warnf, id);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(in);
  auto *src =
      b_.CreateInBoundsGEP(b_.getInt8Ty(), mem, b_.CreateMul(idx, i64(esize)));
  copy(out, src, esize);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  if (is_scalar(elem) || elem.kind == TypeKind::Boolean)
    return {load_int(out, elem), false};
  return {out, true};
}

Val IRGen::gen_cast(Cast &e) {
  Type to = storage_type(e.type);
  Type from = storage_type(e.expr->type);
  if (to.kind == TypeKind::Array) {
    auto *slot = entry_alloca(std::max<uint32_t>(to.size, 8), "cast");
    zero(slot, std::max<uint32_t>(to.size, 8));
    Val v = gen(e.expr);
    if (v.mem)
      copy(slot, v.v, std::min(to.size, from.size));
    else
      store_int(slot, v.v, make_int(to.size, false));
    return {slot, true};
  }
  if (to.kind == TypeKind::String && e.expr->type.kind == TypeKind::ProbeName)
    return probe_text(e.expr);
  if (to.kind == TypeKind::String || to.kind == TypeKind::Buffer ||
      to.kind == TypeKind::Inet) {
    auto *slot = entry_alloca(to.size, "cast");
    store_value(slot, to, gen(e.expr), from);
    return {slot, true};
  }
  llvm::Value *v;
  if (from.kind == TypeKind::Array) {
    Val a = gen(e.expr);
    v = load_int(a.v, make_int(std::min<uint32_t>(from.size, 8), false));
  } else {
    v = gen_scalar(e.expr);
  }
  if (to.kind == TypeKind::Boolean)
    return {b_.CreateZExt(b_.CreateICmpNE(v, i64(0)), i64t()), false};
  // The low `bytes` of v, extended back to 64 bits.
  auto narrowed = [&](uint32_t bytes, bool is_signed) -> llvm::Value * {
    auto *narrow = b_.CreateTrunc(v, llvm::Type::getIntNTy(*llctx_, 8 * bytes));
    return is_signed ? b_.CreateSExt(narrow, i64t())
                     : b_.CreateZExt(narrow, i64t());
  };
  // A narrower integer becomes an address zero-extended, as bpftrace's
  // inttoptr does: (uint8 *)-1 is 0xff, -1 being an int8 literal.
  if (e.type.kind == TypeKind::Pointer && from.is_int() && from.size < 8)
    v = narrowed(from.size, false);
  if (to.is_int() && to.size < 8)
    v = narrowed(to.size, to.is_signed);
  return {v, false};
}

Val IRGen::gen_tuple(Expr &e, const std::vector<Expr *> &elems) {
  Type t = e.type;
  auto *slot = entry_alloca(std::max<uint32_t>(t.size, 1), "tuple");
  zero(slot, t.size);
  for (size_t i = 0; i < elems.size() && i < t.fields.size(); i++) {
    Val v = gen(elems[i]);
    const auto &f = t.fields[i];
    store_value(byte_ptr(slot, f.offset), *f.type, v, elems[i]->type);
  }
  return {slot, true};
}

Val IRGen::gen_identifier(Identifier &e) {
  switch (e.ident_kind) {
  case IdentKind::Builtin:
    return gen_builtin(e.var, e.var_index, e.name, e);
  case IdentKind::EnumValue:
    return {i64(static_cast<uint64_t>(e.enum_value)), false};
  case IdentKind::StackMode:
  case IdentKind::TimestampMode:
  case IdentKind::TypeName:
  case IdentKind::Unresolved:
    break;
  }
  fail(e.loc, "BUG: '" + e.name + "' has no value");
  return {i64(0), false};
}

} // namespace ubtrace::codegen
