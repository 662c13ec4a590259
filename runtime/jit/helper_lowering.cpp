#include "runtime/jit/helper_lowering.h"

#include <algorithm>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace ubtrace::jit {
namespace {

llvm::FunctionType *uniform_helper_type(llvm::LLVMContext &ctx) {
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  return llvm::FunctionType::get(i64, {i64, i64, i64, i64, i64}, false);
}

// long iterate(void *map, ForEachCallback cb, void *cb_ctx)
llvm::FunctionType *map_iterate_type(llvm::LLVMContext &ctx) {
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  return llvm::FunctionType::get(llvm::Type::getInt64Ty(ctx), {ptr, ptr, ptr},
                                 false);
}

llvm::Value *as_ptr(llvm::IRBuilderBase &b, llvm::Value *v) {
  return b.CreateIntToPtr(v, b.getPtrTy());
}

} // namespace

Result<llvm::Value *>
AddressHelpers::call_helper(llvm::IRBuilderBase &b, int32_t id,
                            const std::array<llvm::Value *, 5> &args) {
  vm::HelperFn fn = impls_.get(id);
  if (!fn)
    return make_error("helper " + std::to_string(id) +
                      " has no implementation");
  llvm::Value *callee = as_ptr(b, b.getInt64(reinterpret_cast<uint64_t>(fn)));
  return b.CreateCall(uniform_helper_type(b.getContext()), callee, args);
}

Result<llvm::Value *> AddressHelpers::call_map_iterate(llvm::IRBuilderBase &b,
                                                       uint32_t map,
                                                       llvm::Value *map_handle,
                                                       llvm::Function *callback,
                                                       llvm::Value *cb_ctx) {
  if (map >= maps_.size() || !maps_[map].for_each)
    return make_error("map " + std::to_string(map) +
                      " cannot be iterated (its binding has no for_each)");
  llvm::Value *callee =
      as_ptr(b, b.getInt64(reinterpret_cast<uint64_t>(maps_[map].for_each)));
  return b.CreateCall(map_iterate_type(b.getContext()), callee,
                      {as_ptr(b, map_handle), callback, as_ptr(b, cb_ctx)});
}

llvm::Function *SymbolHelpers::declare(llvm::IRBuilderBase &b,
                                       const std::string &name,
                                       llvm::FunctionType *type) {
  llvm::Module &module = *b.GetInsertBlock()->getModule();
  if (llvm::Function *fn = module.getFunction(name))
    return fn;
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  if (options_.call_through_got)
    fn->addFnAttr(llvm::Attribute::NonLazyBind);
  return fn;
}

Result<llvm::Value *>
SymbolHelpers::call_helper(llvm::IRBuilderBase &b, int32_t id,
                           const std::array<llvm::Value *, 5> &args) {
  const auto &ids = options_.available;
  if (!ids.empty() && std::find(ids.begin(), ids.end(), id) == ids.end())
    return make_error("helper " + std::to_string(id) +
                      " is not available in the target");
  llvm::Function *fn =
      declare(b, helper_symbol(id), uniform_helper_type(b.getContext()));
  return b.CreateCall(fn, args);
}

Result<llvm::Value *> SymbolHelpers::call_map_iterate(llvm::IRBuilderBase &b,
                                                      uint32_t,
                                                      llvm::Value *map_handle,
                                                      llvm::Function *callback,
                                                      llvm::Value *cb_ctx) {
  llvm::Function *fn =
      declare(b, kMapIterateSymbol, map_iterate_type(b.getContext()));
  return b.CreateCall(fn, {as_ptr(b, map_handle), callback, as_ptr(b, cb_ctx)});
}

} // namespace ubtrace::jit
