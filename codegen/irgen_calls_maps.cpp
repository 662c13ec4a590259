// Lowering of the functions on whole maps: clear, zero, delete, has_key,
// len. (Aggregations are lowered with their map assignment, irgen_maps.cpp.)
#include "ast/builtins.h"
#include "codegen/irgen.h"

#include <linux/bpf.h>

namespace ubtrace::codegen {

using namespace ast;

Val IRGen::gen_clear_zero(Call &c) {
  auto &A = c.args;
  auto &mg = map_of(static_cast<Map *>(A[0])->name);
  gen_simple_event(c.fn == BuiltinFn::Clear ? abi::EventType::ClearMap
                                            : abi::EventType::ZeroMap,
                   mg.id);
  return {i64(0), false};
}

Val IRGen::gen_delete_has_key(Call &c) {
  auto &A = c.args;
  auto *m = static_cast<Map *>(A[0]);
  MapGen &mg = map_of(m->name);
  llvm::Value *key =
      A.size() == 2 ? gen_key_from(A[1], mg, c.loc) : gen_key(*m, mg);
  if (c.fn == BuiltinFn::Delete) {
    if (mg.bpf_type == BPF_MAP_TYPE_PERCPU_ARRAY) {
      // An array entry cannot go: it is reset to its unset value.
      gen_simple_event(abi::EventType::ClearMap, mg.id);
      return {i64(1), false};
    }
    auto *rc = helper(BPF_FUNC_map_delete_elem, i64t(), {mg.gv, key});
    return {b_.CreateZExt(b_.CreateICmpEQ(rc, i64(0)), i64t()), false};
  }
  auto *p = helper(BPF_FUNC_map_lookup_elem, ptrt(), {mg.gv, key});
  return {b_.CreateZExt(b_.CreateIsNotNull(p), i64t()), false};
}

Val IRGen::gen_len(Call &c) {
  auto &A = c.args;
  Type t = A[0]->type;
  if (t.kind == TypeKind::UStack || t.kind == TypeKind::KStack) {
    Val v = gen(A[0]);
    return {b_.CreateAlignedLoad(i64t(), v.v, llvm::Align(8)), false};
  }
  // Count entries: a for_each callback that adds one per entry.
  auto &mg = map_of(static_cast<Map *>(A[0])->name);
  auto *counter = entry_alloca(8, "len");
  b_.CreateAlignedStore(i64(0), counter, llvm::Align(8));
  auto *cb_ty =
      llvm::FunctionType::get(i64t(), {ptrt(), ptrt(), ptrt(), ptrt()}, false);
  auto *cb = llvm::Function::Create(cb_ty, llvm::Function::InternalLinkage,
                                    "len_cb", *mod_);
  cb->setSection(".text");
  auto *di_ptr = di_->createPointerType(nullptr, 64);
  auto *sp =
      di_->createFunction(cu_, "len_cb", "len_cb", difile_, c.loc.begin.line,
                          di_->createSubroutineType(di_->getOrCreateTypeArray(
                              {di_int(), di_ptr, di_ptr, di_ptr, di_ptr})),
                          c.loc.begin.line, llvm::DINode::FlagPrototyped,
                          llvm::DISubprogram::SPFlagDefinition |
                              llvm::DISubprogram::SPFlagLocalToUnit);
  const char *pnames[] = {"map", "key", "value", "data"};
  for (unsigned i = 0; i < 4; i++)
    di_->createParameterVariable(sp, pnames[i], i + 1, difile_,
                                 c.loc.begin.line, di_ptr, true);
  cb->setSubprogram(sp);
  {
    llvm::IRBuilder<> cbb(llvm::BasicBlock::Create(*llctx_, "entry", cb));
    auto *cp = cb->getArg(3);
    auto *old = cbb.CreateAlignedLoad(i64t(), cp, llvm::Align(8));
    cbb.CreateAlignedStore(cbb.CreateAdd(old, i64(1)), cp, llvm::Align(8));
    cbb.CreateRet(i64(0));
  }
  helper(BPF_FUNC_for_each_map_elem, i64t(), {mg.gv, cb, counter, i64(0)});
  return {b_.CreateAlignedLoad(i64t(), counter, llvm::Align(8)), false};
}

} // namespace ubtrace::codegen
