// Lowering of the string, buffer and time-format functions.
#include "ast/builtins.h"
#include "codegen/irgen.h"

#include <linux/bpf.h>

namespace ubtrace::codegen {

using namespace ast;

Val IRGen::gen_time(Call &c) {
  auto &A = c.args;
  std::string fmt =
      A.empty() ? "%H:%M:%S\n" : static_cast<String *>(A[0])->value;
  uint64_t id = bundle_.time_formats.size();
  bundle_.time_formats.push_back(fmt);
  gen_simple_event(abi::EventType::Time, id);
  return {i64(0), false};
}

Val IRGen::gen_strftime(Call &c) {
  auto &A = c.args;
  uint64_t id = bundle_.time_formats.size();
  bundle_.time_formats.push_back(static_cast<String *>(A[0])->value);
  auto *ns = gen_scalar(A[1]);
  auto *buf = entry_alloca(16, "strftime");
  b_.CreateAlignedStore(i64(id), buf, llvm::Align(8));
  b_.CreateAlignedStore(ns, byte_ptr(buf, 8), llvm::Align(8));
  return {buf, true};
}

namespace {

// What bpftrace folds at compile time in str(X, n), cutting the text to n
// characters: a string literal, a positional parameter, and a positional
// parameter plus an offset (`$1 + 1`, a pointer into its text here).
bool folded_text(const Expr *e) {
  if (dyn_cast<String>(e) || dyn_cast<PositionalParam>(e))
    return true;
  const auto *sum = dyn_cast<Binop>(e);
  if (!sum || sum->op != BinOp::Add)
    return false;
  const Expr *left = sum->left;
  if (const auto *addr = dyn_cast<Unop>(left); addr && addr->op == UnOp::AddrOf)
    left = addr->expr;
  return dyn_cast<PositionalParam>(left) != nullptr;
}

} // namespace

Val IRGen::gen_str(Call &c) {
  auto &A = c.args;
  Type t = c.type;
  uint32_t size = t.size;
  // As bpftrace does below 1024 bytes, read one byte more than the string
  // holds: a source too long to fit leaves the string without its NUL,
  // which the printer shows with the truncation trailer ("abcdefgh..").
  uint32_t pad = size < 1024 ? 1 : 0;
  auto *buf = entry_alloca(size + pad, "str");
  zero(buf, size + pad);
  Type at = A[0]->type;
  if (at.kind == TypeKind::String) {
    Val v = gen(A[0]);
    uint32_t copy_n = std::min(size, at.size);
    copy(buf, v.v, copy_n);
    if (A.size() == 2) {
      // str(s, n): as bpftrace, at most n characters of a literal (its
      // constant folding cuts the text), n - 1 of any other string (read
      // as a pointer would be: n bytes with the NUL; none for 0).
      auto *len = gen_scalar(A[1]);
      if (!folded_text(A[0]))
        len = b_.CreateSelect(b_.CreateICmpEQ(len, i64(0)), i64(0),
                              b_.CreateSub(len, i64(1)));
      auto *cut = b_.CreateSelect(b_.CreateICmpULT(len, i64(size - 1 + pad)),
                                  len, i64(size - 1 + pad));
      b_.CreateStore(b_.getInt8(0),
                     b_.CreateInBoundsGEP(b_.getInt8Ty(), buf, cut));
    }
    if (!pad)
      b_.CreateStore(b_.getInt8(0), byte_ptr(buf, size - 1));
    return {buf, true};
  }
  llvm::Value *len = i64(size + pad);
  if (A.size() == 2) {
    // str(p, n): n bytes with the NUL (n - 1 characters), as bpftrace's
    // probe_read_str of size n (n characters of folded text); an unsigned
    // min, so n = -1 reads it all, and never 0 bytes (the verifier
    // refuses it): 0 reads only the NUL.
    auto *n = gen_scalar(A[1]);
    if (folded_text(A[0]))
      n = b_.CreateSelect(b_.CreateICmpEQ(n, i64(-1)), n,
                          b_.CreateAdd(n, i64(1)));
    auto *cap = i64(size + pad);
    len = b_.CreateSelect(b_.CreateICmpULT(n, cap), n, cap);
    len = b_.CreateSelect(b_.CreateICmpEQ(len, i64(0)), i64(1), len);
  }
  llvm::Value *src = at.kind == TypeKind::Array
                         ? to_mem(gen(A[0]), at)
                         : b_.CreateIntToPtr(gen_scalar(A[0]), ptrt());
  auto *ret = helper(BPF_FUNC_probe_read_user_str, i64t(), {buf, len, src});
  if (at.kind != TypeKind::Array) {
    auto *rc = b_.CreateSExt(b_.CreateTrunc(ret, b_.getInt32Ty()), i64t());
    check_helper(b_.CreateICmpSLT(rc, i64(0)), rc, BPF_FUNC_probe_read_user_str,
                 "probe_read_user_str", A[0]->loc);
  }
  return {buf, true};
}

Val IRGen::gen_buf(Call &c) {
  auto &A = c.args;
  Type t = c.type;
  uint32_t cap = t.size - 4;
  auto *out = entry_alloca(t.size, "buf");
  zero(out, t.size);
  Type at = A[0]->type;
  llvm::Value *len = i64(cap);
  if (A.size() == 2) {
    auto *want = gen_scalar(A[1]);
    len = b_.CreateSelect(b_.CreateICmpULT(want, i64(cap)), want, i64(cap));
  }
  if (at.kind == TypeKind::Array || at.kind == TypeKind::String) {
    // Values in memory (arrays, strings): copy their bytes.
    Val v = gen(A[0]);
    copy(byte_ptr(out, 4), v.v, std::min(cap, at.size));
  } else {
    auto *src = b_.CreateIntToPtr(gen_scalar(A[0]), ptrt());
    if (gpu_ && A.size() == 2)
      // Only the bytes asked for: a GPU cannot survive a read past the
      // end of an allocation, which the host's fault-safe read can.
      helper(BPF_FUNC_probe_read_user, i64t(), {byte_ptr(out, 4), len, src});
    else
      probe_read(byte_ptr(out, 4), cap, src);
  }
  store_int(out, len, make_int(4, false));
  return {out, true};
}

Val IRGen::gen_strncmp(Call &c) {
  auto &A = c.args;
  Val a = gen(A[0]), bv = gen(A[1]);
  int64_t limit = 0;
  if (auto *i = dyn_cast<Integer>(A[2]))
    limit = i->as_signed();
  uint32_t size =
      std::min<uint32_t>(std::min(A[0]->type.size, A[1]->type.size),
                         static_cast<uint32_t>(std::max<int64_t>(limit, 0)));
  auto *eq = gen_memcmp_eq(a.v, bv.v, size, true);
  return {b_.CreateZExt(b_.CreateNot(eq), i64t()), false};
}

Val IRGen::gen_strlen(Call &c) {
  auto &A = c.args;
  Val s = gen(A[0]);
  uint32_t size = A[0]->type.size;
  auto *len = entry_alloca(8, "strlen");
  b_.CreateAlignedStore(i64(size), len, llvm::Align(8));
  auto *done = block("strlen.done");
  for (uint32_t i = 0; i < size; i++) {
    auto *ch = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(s.v, i));
    auto *hit = block("strlen.hit");
    auto *next = block("strlen.next");
    b_.CreateCondBr(b_.CreateICmpEQ(ch, b_.getInt8(0)), hit, next);
    b_.SetInsertPoint(hit);
    b_.CreateAlignedStore(i64(i), len, llvm::Align(8));
    b_.CreateBr(done);
    b_.SetInsertPoint(next);
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return {b_.CreateAlignedLoad(i64t(), len, llvm::Align(8)), false};
}

Val IRGen::gen_strcontains(Call &c) {
  auto &A = c.args;
  // Naive search, bounded by both capacities.
  Val h = gen(A[0]), nd = gen(A[1]);
  uint32_t hs = A[0]->type.size, ns = A[1]->type.size;
  auto *found = entry_alloca(8, "found");
  b_.CreateAlignedStore(i64(0), found, llvm::Align(8));
  auto *done = block("contains.done");
  // An empty needle is always contained.
  auto *empty = block("contains.empty");
  auto *nonempty = block("contains.search");
  b_.CreateCondBr(
      b_.CreateICmpEQ(b_.CreateLoad(b_.getInt8Ty(), nd.v), b_.getInt8(0)),
      empty, nonempty);
  b_.SetInsertPoint(empty);
  b_.CreateAlignedStore(i64(1), found, llvm::Align(8));
  b_.CreateBr(done);
  b_.SetInsertPoint(nonempty);
  auto *i_slot = entry_alloca(8, "ci");
  b_.CreateAlignedStore(i64(0), i_slot, llvm::Align(8));
  auto *outer = block("contains.outer");
  auto *outer_body = block("contains.at");
  auto *outer_next = block("contains.next");
  b_.CreateBr(outer);
  b_.SetInsertPoint(outer);
  auto *i = b_.CreateAlignedLoad(i64t(), i_slot, llvm::Align(8));
  b_.CreateCondBr(b_.CreateICmpULT(i, i64(hs)), outer_body, done);
  b_.SetInsertPoint(outer_body);
  // Compare the needle at position i.
  auto *match = block("contains.match");
  for (uint32_t j = 0; j + 1 < ns; j++) {
    auto *nc = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(nd.v, j));
    auto *cont = block("contains.cmp");
    b_.CreateCondBr(b_.CreateICmpEQ(nc, b_.getInt8(0)), match, cont);
    b_.SetInsertPoint(cont);
    auto *pos = b_.CreateAdd(i, i64(j));
    auto *in = block("contains.in");
    b_.CreateCondBr(b_.CreateICmpULT(pos, i64(hs)), in, outer_next);
    b_.SetInsertPoint(in);
    auto *hc = b_.CreateLoad(b_.getInt8Ty(),
                             b_.CreateInBoundsGEP(b_.getInt8Ty(), h.v, pos));
    auto *same = block("contains.same");
    b_.CreateCondBr(b_.CreateICmpEQ(hc, nc), same, outer_next);
    b_.SetInsertPoint(same);
  }
  b_.CreateBr(match);
  b_.SetInsertPoint(match);
  b_.CreateAlignedStore(i64(1), found, llvm::Align(8));
  b_.CreateBr(done);
  b_.SetInsertPoint(outer_next);
  // Stop at the haystack's end.
  auto *hc = b_.CreateLoad(b_.getInt8Ty(),
                           b_.CreateInBoundsGEP(b_.getInt8Ty(), h.v, i));
  auto *adv = block("contains.advance");
  b_.CreateCondBr(b_.CreateICmpEQ(hc, b_.getInt8(0)), done, adv);
  b_.SetInsertPoint(adv);
  b_.CreateAlignedStore(b_.CreateAdd(i, i64(1)), i_slot, llvm::Align(8));
  b_.CreateBr(outer);
  b_.SetInsertPoint(done);
  return {b_.CreateAlignedLoad(i64t(), found, llvm::Align(8)), false};
}

} // namespace ubtrace::codegen
