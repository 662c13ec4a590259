// JMP and JMP32: `ja`/`gotol` and the conditional jumps, on 64 bits or on the
// low 32 bits of both operands.
#include "runtime/jit/lift_function.h"

namespace ubtrace::jit::detail {

llvm::Value *FunctionLifter::condition(uint8_t op, llvm::Value *a,
                                       llvm::Value *b) {
  switch (op) {
  case BPF_JEQ:
    return b_.CreateICmpEQ(a, b);
  case BPF_JNE:
    return b_.CreateICmpNE(a, b);
  case BPF_JGT:
    return b_.CreateICmpUGT(a, b);
  case BPF_JGE:
    return b_.CreateICmpUGE(a, b);
  case BPF_JLT:
    return b_.CreateICmpULT(a, b);
  case BPF_JLE:
    return b_.CreateICmpULE(a, b);
  case BPF_JSGT:
    return b_.CreateICmpSGT(a, b);
  case BPF_JSGE:
    return b_.CreateICmpSGE(a, b);
  case BPF_JSLT:
    return b_.CreateICmpSLT(a, b);
  case BPF_JSLE:
    return b_.CreateICmpSLE(a, b);
  case BPF_JSET:
    return b_.CreateICmpNE(b_.CreateAnd(a, b),
                           llvm::ConstantInt::get(a->getType(), 0));
  }
  return nullptr;
}

Result<void> FunctionLifter::lift_jmp(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  int64_t target = vm::jump_target(in, pc);
  if (target < info_.start || target >= info_.end)
    return error_at(pc,
                    "jump out of its function to " + std::to_string(target));
  uint8_t op = vm::insn_op(in.code);
  if (op == BPF_JA) {
    b_.CreateBr(block_at(uint32_t(target)));
    return {};
  }
  bool wide = vm::insn_class(in.code) == BPF_JMP;
  bool from_reg = vm::insn_source(in.code) == BPF_X;
  llvm::Value *a = reg(in.dst);
  llvm::Value *b = from_reg ? reg(in.src) : imm64(in.imm);
  if (!wide) {
    a = b_.CreateTrunc(a, b_.getInt32Ty());
    b = from_reg ? b_.CreateTrunc(b, b_.getInt32Ty()) : imm32(in.imm);
  }
  llvm::Value *taken = condition(op, a, b);
  if (!taken)
    return error_at(pc, "unknown jump operation");
  if (pc + 1 >= info_.end)
    return error_at(pc, "conditional jump falls off the end of its function");
  b_.CreateCondBr(taken, block_at(uint32_t(target)), block_at(pc + 1));
  return {};
}

} // namespace ubtrace::jit::detail
