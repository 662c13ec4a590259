// Calls: BPF-to-BPF calls become direct calls of the lifted function (the
// caller's r6..r9 live on in its own SSA values, the callee gets a frame of
// its own); helper calls go to the HelperLowering strategy; bpf_loop and
// bpf_for_each_map_elem are lowered here, with the callback the verifier
// found for the call site.
#include "runtime/jit/lift_function.h"

#include <cerrno>
#include <llvm/IR/Intrinsics.h>

namespace ubtrace::jit::detail {

Result<void> FunctionLifter::lift_call(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  if (in.src == BPF_PSEUDO_CALL)
    return lift_pseudo_call(pc);
  if (in.src != 0)
    return error_at(pc, "call with unsupported src " + std::to_string(in.src));
  const vm::HelperCallSite *site = scope_.helper_site(pc);
  if (!site) {
    // The verifier lists every helper call it can reach: this one is dead.
    // Trap rather than trust that blindly.
    b_.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
    b_.CreateUnreachable();
    return {};
  }
  if (site->helper == BPF_FUNC_loop)
    return lift_bpf_loop(pc, *site);
  if (site->helper == BPF_FUNC_for_each_map_elem)
    return lift_for_each(pc, *site);
  std::array<llvm::Value *, 5> args{reg(1), reg(2), reg(3), reg(4), reg(5)};
  auto r0 = scope_.helpers.call_helper(b_, site->helper, args);
  if (!r0)
    return error_at(pc, r0.error());
  set_reg(0, *r0);
  return {};
}

Result<void> FunctionLifter::lift_pseudo_call(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  llvm::Function *callee = function_at(uint32_t(int64_t(pc) + 1 + in.imm));
  if (!callee)
    return error_at(pc, "call of a pc that starts no function");
  set_reg(0, b_.CreateCall(callee, {reg(1), reg(2), reg(3), reg(4), reg(5)}));
  return {};
}

// r0 = bpf_loop(u32 nr, cb, ctx, flags): calls cb(i, ctx) for i < nr until
// it returns nonzero; -EINVAL for flags, -E2BIG past the kernel's bound;
// else the number of calls made.
Result<void> FunctionLifter::lift_bpf_loop(uint32_t pc,
                                           const vm::HelperCallSite &site) {
  llvm::Function *callback = function_at(uint32_t(site.callback));
  if (site.callback < 0 || !callback)
    return error_at(pc, "bpf_loop without a known callback");
  llvm::Value *nr = b_.CreateAnd(reg(1), b_.getInt64(0xffffffffu));
  llvm::Value *cb_ctx = reg(3);
  llvm::Value *flags = reg(4);
  auto block = [&](const char *name) {
    return llvm::BasicBlock::Create(ctx_, name, fn_);
  };
  llvm::BasicBlock *check = block("loop.check"), *start = block("loop.start"),
                   *head = block("loop.body"), *next = block("loop.next"),
                   *done = block("loop.done");
  llvm::BasicBlock *from = b_.GetInsertBlock();
  b_.CreateCondBr(b_.CreateICmpNE(flags, b_.getInt64(0)), done, check);

  b_.SetInsertPoint(check);
  b_.CreateCondBr(b_.CreateICmpUGT(nr, b_.getInt64(vm::kMaxLoopIterations)),
                  done, start);

  b_.SetInsertPoint(start);
  b_.CreateCondBr(b_.CreateICmpEQ(nr, b_.getInt64(0)), done, head);

  b_.SetInsertPoint(head);
  llvm::PHINode *i = b_.CreatePHI(i64_, 2, "i");
  i->addIncoming(b_.getInt64(0), start);
  llvm::Value *stop = b_.CreateCall(
      callback, {i, cb_ctx, b_.getInt64(0), b_.getInt64(0), b_.getInt64(0)});
  llvm::Value *calls = b_.CreateAdd(i, b_.getInt64(1));
  b_.CreateCondBr(b_.CreateICmpNE(stop, b_.getInt64(0)), done, next);

  b_.SetInsertPoint(next);
  i->addIncoming(calls, next);
  b_.CreateCondBr(b_.CreateICmpULT(calls, nr), head, done);

  b_.SetInsertPoint(done);
  llvm::PHINode *r0 = b_.CreatePHI(i64_, 5, "loop.r0");
  r0->addIncoming(b_.getInt64(uint64_t(-int64_t(EINVAL))), from);
  r0->addIncoming(b_.getInt64(uint64_t(-int64_t(E2BIG))), check);
  r0->addIncoming(b_.getInt64(0), start);
  r0->addIncoming(calls, head);
  r0->addIncoming(nr, next);
  set_reg(0, r0);
  return {};
}

// r0 = bpf_for_each_map_elem(map, cb, ctx, flags): the map's iteration
// function with the callback's adapter; -EINVAL for flags.
Result<void> FunctionLifter::lift_for_each(uint32_t pc,
                                           const vm::HelperCallSite &site) {
  if (site.callback < 0 || !function_at(uint32_t(site.callback)))
    return error_at(pc, "bpf_for_each_map_elem without a known callback");
  if (site.map < 0)
    return error_at(pc, "bpf_for_each_map_elem without a known map");
  llvm::Function *adapter = scope_.for_each_adapter(uint32_t(site.callback));
  llvm::Value *map = reg(1);
  llvm::Value *cb_ctx = reg(3);
  llvm::Value *flags = reg(4);
  llvm::BasicBlock *from = b_.GetInsertBlock();
  auto *iterate = llvm::BasicBlock::Create(ctx_, "each.call", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, "each.done", fn_);
  b_.CreateCondBr(b_.CreateICmpNE(flags, b_.getInt64(0)), done, iterate);

  b_.SetInsertPoint(iterate);
  auto visited = scope_.helpers.call_map_iterate(b_, uint32_t(site.map), map,
                                                 adapter, cb_ctx);
  if (!visited)
    return error_at(pc, visited.error());
  llvm::BasicBlock *iterated = b_.GetInsertBlock();
  b_.CreateBr(done);

  b_.SetInsertPoint(done);
  llvm::PHINode *r0 = b_.CreatePHI(i64_, 2, "each.r0");
  r0->addIncoming(b_.getInt64(uint64_t(-int64_t(EINVAL))), from);
  r0->addIncoming(*visited, iterated);
  set_reg(0, r0);
  return {};
}

} // namespace ubtrace::jit::detail
