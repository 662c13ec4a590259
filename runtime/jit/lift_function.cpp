// One BPF function to one LLVM function: a basic block per leader, the
// registers as allocas (mem2reg turns them into SSA), the frame as an alloca,
// and a dispatch on the instruction class to the per-class units.
#include "runtime/jit/lift_function.h"

#include <cassert>
#include <llvm/IR/Module.h>

namespace ubtrace::jit::detail {

FunctionLifter::FunctionLifter(ProgramScope &scope, const vm::SubprogInfo &info,
                               llvm::Function *fn)
    : scope_(scope), info_(info), fn_(fn), ctx_(fn->getContext()), b_(ctx_),
      i64_(llvm::Type::getInt64Ty(ctx_)) {}

llvm::Value *FunctionLifter::reg(uint8_t r) {
  return b_.CreateLoad(i64_, regs_[r], "r" + std::to_string(r));
}

void FunctionLifter::set_reg(uint8_t r, llvm::Value *v) {
  b_.CreateStore(v, regs_[r]);
}

llvm::Value *FunctionLifter::imm64(int32_t imm) {
  return b_.getInt64(uint64_t(int64_t(imm)));
}

llvm::Value *FunctionLifter::imm32(int32_t imm) {
  return b_.getInt32(uint32_t(imm));
}

llvm::BasicBlock *FunctionLifter::block_at(uint32_t pc) {
  auto it = blocks_.find(pc);
  assert(it != blocks_.end() && "jump to a pc that is not a leader");
  return it->second;
}

llvm::Function *FunctionLifter::function_at(uint32_t entry) {
  auto it = scope_.functions.find(entry);
  return it == scope_.functions.end() ? nullptr : it->second;
}

// Block boundaries: the function's start, jump targets, and whatever follows
// a jump or an exit.
void FunctionLifter::find_leaders() {
  const auto &insns = scope_.program.insns;
  auto leader = [&](uint32_t pc) {
    if (pc >= info_.start && pc < info_.end && !blocks_.count(pc))
      blocks_[pc] =
          llvm::BasicBlock::Create(ctx_, "pc" + std::to_string(pc), fn_);
  };
  leader(info_.start);
  for (uint32_t pc = info_.start; pc < info_.end; ++pc) {
    const vm::Insn &in = insns[pc];
    if (vm::is_ld_imm64(in)) {
      ++pc;
      continue;
    }
    if (vm::is_jump(in)) {
      leader(uint32_t(vm::jump_target(in, pc)));
      leader(pc + 1);
    } else if (vm::is_exit(in)) {
      leader(pc + 1);
    }
  }
}

// Registers and frame. r10 points one past the frame, 16-byte aligned as
// the interpreter's frames are.
void FunctionLifter::emit_prologue() {
  auto *entry = llvm::BasicBlock::Create(ctx_, "entry", fn_, &fn_->front());
  b_.SetInsertPoint(entry);
  for (int r = 0; r < vm::kNumRegs; ++r)
    regs_.push_back(b_.CreateAlloca(i64_, nullptr, "reg" + std::to_string(r)));
  uint32_t frame =
      scope_.options.full_stack_frames
          ? uint32_t(vm::kStackSize)
          : std::max<uint32_t>((info_.stack_depth + 15) & ~15u, 16);
  auto *stack = b_.CreateAlloca(llvm::ArrayType::get(b_.getInt8Ty(), frame),
                                nullptr, "frame");
  stack->setAlignment(llvm::Align(16));
  bool is_entry = fn_->arg_size() == 1;
  for (uint8_t r = 0; r < vm::kFramePointer; ++r) {
    llvm::Value *v = b_.getInt64(0);
    if (is_entry && r == 1)
      v = b_.CreatePtrToInt(fn_->getArg(0), i64_);
    else if (!is_entry && r >= 1 && r <= 5)
      v = fn_->getArg(r - 1);
    set_reg(r, v);
  }
  set_reg(vm::kFramePointer,
          b_.CreateAdd(b_.CreatePtrToInt(stack, i64_), b_.getInt64(frame)));
  b_.CreateBr(block_at(info_.start));
}

Result<void> FunctionLifter::lift() {
  find_leaders();
  emit_prologue();
  const auto &insns = scope_.program.insns;
  for (uint32_t pc = info_.start; pc < info_.end; ++pc) {
    if (auto it = blocks_.find(pc); it != blocks_.end()) {
      if (!b_.GetInsertBlock()->getTerminator())
        b_.CreateBr(it->second);
      b_.SetInsertPoint(it->second);
    } else if (b_.GetInsertBlock()->getTerminator()) {
      // Code after a terminator that nothing jumps to: dead, but lifted
      // like the rest (the optimiser drops it).
      b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "dead", fn_));
    }
    const vm::Insn &in = insns[pc];
    Result<void> lifted;
    switch (vm::insn_class(in.code)) {
    case BPF_ALU64:
      lifted = lift_alu64(pc);
      break;
    case BPF_ALU:
      lifted = lift_alu32(pc);
      break;
    case BPF_LDX:
      lifted = lift_ldx(pc);
      break;
    case BPF_ST:
      lifted = lift_st(pc);
      break;
    case BPF_STX:
      lifted = lift_stx(pc);
      break;
    case BPF_LD:
      lifted = lift_ld(pc);
      ++pc; // the second half of ld_imm64
      break;
    case BPF_JMP:
    case BPF_JMP32:
      if (vm::is_call(in))
        lifted = lift_call(pc);
      else if (vm::is_exit(in))
        lifted = lift_exit(pc);
      else
        lifted = lift_jmp(pc);
      break;
    }
    if (!lifted)
      return lifted;
  }
  // The verifier rejects falling off the end of a function.
  if (!b_.GetInsertBlock()->getTerminator())
    b_.CreateUnreachable();
  return {};
}

Result<void> FunctionLifter::lift_exit(uint32_t) {
  b_.CreateRet(reg(0));
  return {};
}

llvm::Value *FunctionLifter::address(uint8_t base_reg, int16_t off) {
  llvm::Value *addr = reg(base_reg);
  if (off != 0)
    addr = b_.CreateAdd(addr, b_.getInt64(uint64_t(int64_t(off))));
  return b_.CreateIntToPtr(addr, b_.getPtrTy());
}

} // namespace ubtrace::jit::detail
