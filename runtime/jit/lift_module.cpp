// lift_program(): declares one LLVM function per BPF function of the program,
// then lifts each body.
#include "runtime/jit/lift_function.h"

#include <llvm/IR/Module.h>

namespace ubtrace::jit {

std::vector<MapConstants> map_constants(std::span<const vm::MapBinding> maps) {
  std::vector<MapConstants> out;
  out.reserve(maps.size());
  for (const vm::MapBinding &m : maps)
    out.push_back({m.handle, reinterpret_cast<uint64_t>(m.value_base)});
  return out;
}

namespace detail {

Error error_at(uint32_t pc, const std::string &what) {
  return make_error("PC " + std::to_string(pc) + ": " + what);
}

const vm::HelperCallSite *ProgramScope::helper_site(uint32_t pc) const {
  for (const vm::HelperCallSite &s : program.helper_calls)
    if (s.pc == pc)
      return &s;
  return nullptr;
}

// i64 adapter(ptr map, ptr key, ptr value, ptr ctx): the ForEachCallback a
// map's iteration function calls, forwarding to the lifted callback.
llvm::Function *ProgramScope::for_each_adapter(uint32_t entry) {
  if (auto it = adapters.find(entry); it != adapters.end())
    return it->second;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(i64, {ptr, ptr, ptr, ptr}, false);
  auto *fn = llvm::Function::Create(
      type, llvm::GlobalValue::InternalLinkage,
      entry_name + ".each" + std::to_string(entry), module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value *args[5];
  for (unsigned i = 0; i < 4; ++i)
    args[i] = b.CreatePtrToInt(fn->getArg(i), i64);
  args[4] = b.getInt64(0);
  b.CreateRet(b.CreateCall(functions.at(entry), args));
  adapters[entry] = fn;
  return fn;
}

} // namespace detail

Result<llvm::Function *>
lift_program(llvm::Module &module, const vm::VerifiedProgram &program,
             std::span<const MapConstants> maps, HelperLowering &helpers,
             const std::string &entry_name, const LiftOptions &options) {
  if (program.subprogs.empty() || program.subprogs[0].start != 0)
    return make_error("the program has no entry function (not verified?)");
  for (uint32_t index : program.maps_used)
    if (index >= maps.size())
      return make_error("map " + std::to_string(index) + " has no constants (" +
                        std::to_string(maps.size()) + " maps given)");
  detail::ProgramScope scope{module,  program,    maps, helpers,
                             options, entry_name, {},   {}};
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *entry_type = llvm::FunctionType::get(i64, {ptr}, false);
  auto *sub_type =
      llvm::FunctionType::get(i64, {i64, i64, i64, i64, i64}, false);

  auto name_of = [&](size_t i) {
    return i == 0
               ? entry_name
               : entry_name + ".fn" + std::to_string(program.subprogs[i].start);
  };
  for (size_t i = 0; i < program.subprogs.size(); ++i)
    if (module.getNamedValue(name_of(i)))
      return make_error("the module already has a symbol named " + name_of(i));
  for (size_t i = 0; i < program.subprogs.size(); ++i) {
    bool is_entry = i == 0;
    auto *fn =
        llvm::Function::Create(is_entry ? entry_type : sub_type,
                               is_entry ? llvm::GlobalValue::ExternalLinkage
                                        : llvm::GlobalValue::InternalLinkage,
                               name_of(i), module);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    scope.functions.emplace(program.subprogs[i].start, fn);
  }
  for (const vm::SubprogInfo &info : program.subprogs) {
    detail::FunctionLifter lifter(scope, info, scope.functions.at(info.start));
    if (auto lifted = lifter.lift(); !lifted)
      return std::move(lifted).take_error();
  }
  return scope.functions.at(0);
}

} // namespace ubtrace::jit
