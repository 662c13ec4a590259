#include "runtime/jit/nvptx_passes.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <vector>

namespace ubtrace::jit::nvptx {
namespace {

// `v` as (pointer P) + (constant bytes): ptrtoint(P), or that plus or
// minus constants.
bool pointer_plus_constant(llvm::Value *v, llvm::Value *&base, int64_t &offset,
                           int depth = 0) {
  if (auto *cast = llvm::dyn_cast<llvm::PtrToIntInst>(v)) {
    if (cast->getPointerAddressSpace() != 0 ||
        !cast->getType()->isIntegerTy(64))
      return false;
    base = cast->getPointerOperand();
    offset = 0;
    return true;
  }
  auto *op = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (!op || depth > 8)
    return false;
  // instcombine writes an add to an aligned base as `or disjoint`.
  auto *disjoint = llvm::dyn_cast<llvm::PossiblyDisjointInst>(op);
  bool is_add = op->getOpcode() == llvm::Instruction::Add ||
                (disjoint && disjoint->isDisjoint());
  bool is_sub = op->getOpcode() == llvm::Instruction::Sub;
  if (!is_add && !is_sub)
    return false;
  for (unsigned side = 0; side < (is_add ? 2u : 1u); ++side) {
    auto *c = llvm::dyn_cast<llvm::ConstantInt>(op->getOperand(1 - side));
    if (!c || c->getBitWidth() != 64)
      continue;
    if (pointer_plus_constant(op->getOperand(side), base, offset, depth + 1)) {
      offset += is_sub ? -c->getSExtValue() : c->getSExtValue();
      return true;
    }
  }
  return false;
}

// Marks the kernel parameters that bytes [begin, end) of the context hold.
void mark_args(ContextUse &use, int64_t begin, int64_t end) {
  for (int64_t at = std::max<int64_t>(begin, 16); at < end; ++at) {
    int64_t arg = (at - 16) / 8;
    if (arg < 64)
      use.arg_mask |= uint64_t(1) << arg;
  }
}

} // namespace

bool fold_integer_pointers(llvm::Function &fn) {
  std::vector<llvm::IntToPtrInst *> casts;
  for (llvm::BasicBlock &bb : fn)
    for (llvm::Instruction &inst : bb)
      if (auto *cast = llvm::dyn_cast<llvm::IntToPtrInst>(&inst))
        if (cast->getAddressSpace() == 0)
          casts.push_back(cast);
  bool changed = false;
  for (llvm::IntToPtrInst *cast : casts) {
    llvm::Value *base = nullptr;
    int64_t offset = 0;
    if (!pointer_plus_constant(cast->getOperand(0), base, offset))
      continue;
    llvm::IRBuilder<> b(cast);
    llvm::Value *p = base;
    if (offset != 0)
      p = b.CreateGEP(b.getInt8Ty(), base, b.getInt64(uint64_t(offset)),
                      cast->getName());
    cast->replaceAllUsesWith(p);
    cast->eraseFromParent();
    changed = true;
  }
  return changed;
}

unsigned aggregate_atomic_adds(llvm::Module &module,
                               const std::set<std::string> &probe_code,
                               bool warp_aggregate) {
  llvm::Function *uniform = module.getFunction("__ubt_atomic_add_uniform");
  llvm::Function *plain = module.getFunction("__ubt_atomic_add");
  if (!uniform || !plain)
    return 0;
  std::vector<llvm::AtomicRMWInst *> adds;
  for (llvm::Function &fn : module) {
    if (!probe_code.count(fn.getName().str()))
      continue;
    for (llvm::BasicBlock &bb : fn)
      for (llvm::Instruction &inst : bb)
        if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst))
          if (rmw->getOperation() == llvm::AtomicRMWInst::Add &&
              rmw->use_empty() && rmw->getType()->isIntegerTy(64) &&
              rmw->getPointerAddressSpace() == 0)
            adds.push_back(rmw);
  }
  for (llvm::AtomicRMWInst *rmw : adds) {
    bool same_for_all = llvm::isa<llvm::ConstantInt>(rmw->getValOperand());
    llvm::IRBuilder<> b(rmw);
    b.CreateCall(warp_aggregate && same_for_all ? uniform : plain,
                 {rmw->getPointerOperand(), rmw->getValOperand()});
    rmw->eraseFromParent();
  }
  return static_cast<unsigned>(adds.size());
}

ContextUse analyse_context(const llvm::Function &wrapper) {
  ContextUse use;
  if (wrapper.arg_empty() || wrapper.getArg(0)->use_empty())
    return use;
  use.used = true;
  const llvm::DataLayout &dl = wrapper.getParent()->getDataLayout();
  std::vector<std::pair<const llvm::Value *, int64_t>> work{
      {wrapper.getArg(0), 0}};
  while (!work.empty()) {
    auto [value, offset] = work.back();
    work.pop_back();
    for (const llvm::User *user : value->users()) {
      if (auto *gep = llvm::dyn_cast<llvm::GEPOperator>(user)) {
        llvm::APInt delta(64, 0);
        if (gep->getPointerOperand() == value &&
            gep->accumulateConstantOffset(dl, delta)) {
          work.push_back({gep, offset + delta.getSExtValue()});
          continue;
        }
      } else if (auto *load = llvm::dyn_cast<llvm::LoadInst>(user)) {
        int64_t size = int64_t(dl.getTypeStoreSize(load->getType()));
        mark_args(use, offset, offset + size);
        continue;
      }
      // Escapes or is indexed by a variable: assume it reads everything.
      use.arg_mask = ~uint64_t(0);
      return use;
    }
  }
  return use;
}

} // namespace ubtrace::jit::nvptx
