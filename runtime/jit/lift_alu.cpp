// ALU64 and ALU32 with BPF semantics: division by zero gives 0 and modulo
// by zero leaves the dividend (no trap, no undefined behaviour); signed
// division of INT_MIN by -1 gives INT_MIN (and modulo 0); shift amounts are
// masked to the width; 32-bit results are zero-extended.
#include "runtime/jit/lift_function.h"

#include <llvm/IR/Intrinsics.h>

namespace ubtrace::jit::detail {

// dst op src on `bits`-wide values of the same type.
llvm::Value *FunctionLifter::alu_result(uint8_t op, int16_t off,
                                        llvm::Value *dst, llvm::Value *src,
                                        unsigned bits) {
  llvm::Type *type = dst->getType();
  auto constant = [&](int64_t v) {
    return llvm::ConstantInt::get(type, uint64_t(v), true);
  };
  bool is_signed = off == vm::kOffSigned;
  switch (op) {
  case BPF_ADD:
    return b_.CreateAdd(dst, src);
  case BPF_SUB:
    return b_.CreateSub(dst, src);
  case BPF_MUL:
    return b_.CreateMul(dst, src);
  case BPF_DIV:
  case BPF_MOD: {
    // Divide by a divisor made safe, then pick the defined result.
    llvm::Value *zero = b_.CreateICmpEQ(src, constant(0));
    llvm::Value *minus1 =
        is_signed ? b_.CreateICmpEQ(src, constant(-1)) : b_.getFalse();
    llvm::Value *safe =
        b_.CreateSelect(b_.CreateOr(zero, minus1), constant(1), src);
    bool div = op == BPF_DIV;
    llvm::Value *q =
        div ? (is_signed ? b_.CreateSDiv(dst, safe) : b_.CreateUDiv(dst, safe))
            : (is_signed ? b_.CreateSRem(dst, safe) : b_.CreateURem(dst, safe));
    if (is_signed)
      q = b_.CreateSelect(minus1, div ? b_.CreateNeg(dst) : constant(0), q);
    return b_.CreateSelect(zero, div ? constant(0) : dst, q);
  }
  case BPF_OR:
    return b_.CreateOr(dst, src);
  case BPF_AND:
    return b_.CreateAnd(dst, src);
  case BPF_XOR:
    return b_.CreateXor(dst, src);
  case BPF_LSH:
    return b_.CreateShl(dst, b_.CreateAnd(src, constant(bits - 1)));
  case BPF_RSH:
    return b_.CreateLShr(dst, b_.CreateAnd(src, constant(bits - 1)));
  case BPF_ARSH:
    return b_.CreateAShr(dst, b_.CreateAnd(src, constant(bits - 1)));
  case BPF_MOV:
    if (off == 8 || off == 16 || off == 32) // movsx (v4)
      return b_.CreateSExt(b_.CreateTrunc(src, b_.getIntNTy(unsigned(off))),
                           type);
    return src;
  case BPF_NEG:
    return b_.CreateNeg(dst);
  }
  return nullptr;
}

Result<void> FunctionLifter::lift_alu64(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  uint8_t op = vm::insn_op(in.code);
  if (op == BPF_END) { // ALU64 class: unconditional byte swap (v4)
    if (in.imm != 16 && in.imm != 32 && in.imm != 64)
      return error_at(pc, "byte swap of " + std::to_string(in.imm) + " bits");
    llvm::Value *v = b_.CreateTrunc(reg(in.dst), b_.getIntNTy(in.imm));
    v = b_.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, v);
    set_reg(in.dst, b_.CreateZExt(v, i64_));
    return {};
  }
  llvm::Value *src =
      vm::insn_source(in.code) == BPF_X ? reg(in.src) : imm64(in.imm);
  llvm::Value *v = alu_result(op, in.off, reg(in.dst), src, 64);
  if (!v)
    return error_at(pc, "unknown ALU64 operation");
  set_reg(in.dst, v);
  return {};
}

Result<void> FunctionLifter::lift_alu32(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  uint8_t op = vm::insn_op(in.code);
  if (op == BPF_END) {
    // to_le truncates on a little-endian target; to_be swaps. Both leave
    // the value zero-extended.
    if (in.imm != 16 && in.imm != 32 && in.imm != 64)
      return error_at(pc, "endianness conversion of " + std::to_string(in.imm) +
                              " bits");
    llvm::Value *v = b_.CreateTrunc(reg(in.dst), b_.getIntNTy(in.imm));
    if (vm::insn_source(in.code) == BPF_X)
      v = b_.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, v);
    set_reg(in.dst, b_.CreateZExt(v, i64_));
    return {};
  }
  llvm::Value *dst = b_.CreateTrunc(reg(in.dst), b_.getInt32Ty());
  llvm::Value *src = vm::insn_source(in.code) == BPF_X
                         ? b_.CreateTrunc(reg(in.src), b_.getInt32Ty())
                         : imm32(in.imm);
  llvm::Value *v = alu_result(op, in.off, dst, src, 32);
  if (!v)
    return error_at(pc, "unknown ALU operation");
  set_reg(in.dst, b_.CreateZExt(v, i64_));
  return {};
}

} // namespace ubtrace::jit::detail
