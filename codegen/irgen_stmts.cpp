// Statements and control flow. `for` loops become callbacks of
// bpf_for_each_map_elem (over a map) and bpf_loop (over a range), as the
// kernel wants them; the callback reaches the probe's variables through a
// block of pointers on the probe's stack.
#include "ast/visitor.h"
#include "codegen/irgen.h"

#include <linux/bpf.h>

namespace ubtrace::codegen {

using namespace ast;

void IRGen::gen_block(Block &b) {
  for (auto *s : b.stmts)
    gen_stmt(s);
  if (b.value) {
    if (b_.GetInsertBlock()->getTerminator())
      b_.SetInsertPoint(block("dead"));
    gen(b.value);
  }
}

void IRGen::gen_return() {
  if (returned_flag_) {
    b_.CreateAlignedStore(i64(1), returned_flag_, llvm::Align(8));
    b_.CreateRet(i64(1));
    return;
  }
  b_.CreateRet(i64(0));
}

void IRGen::gen_stmt(Stmt *s) {
  // Code after a return/break/continue is unreachable but still generated.
  if (b_.GetInsertBlock()->getTerminator())
    b_.SetInsertPoint(block("dead"));
  switch (s->kind) {
  case NodeKind::ExprStmt:
    gen(static_cast<ExprStmt *>(s)->expr);
    return;
  case NodeKind::AssignVar: {
    auto *a = static_cast<AssignVar *>(s);
    Val v = gen(a->value);
    store_value(var_slot(a->var->name), var_types_[a->var->name], v,
                a->value->type);
    return;
  }
  case NodeKind::AssignMap:
    gen_map_assign(*static_cast<AssignMap *>(s));
    return;
  case NodeKind::VarDecl: {
    auto *d = static_cast<VarDecl *>(s);
    Type t = var_types_[d->var->name];
    auto *slot = var_slot(d->var->name);
    if (!slot)
      return;
    if (d->init)
      store_value(slot, t, gen(d->init), d->init->type);
    else
      zero(slot, std::max<uint32_t>(t.size, 8));
    return;
  }
  case NodeKind::If:
    gen_if(*static_cast<If *>(s));
    return;
  case NodeKind::Unroll: {
    auto *u = static_cast<Unroll *>(s);
    for (int64_t i = 0; i < u->times; i++) {
      if (b_.GetInsertBlock()->getTerminator())
        break;
      gen_block(*u->body);
    }
    return;
  }
  case NodeKind::While:
    gen_while(*static_cast<While *>(s));
    return;
  case NodeKind::For:
    gen_for(*static_cast<For *>(s));
    return;
  case NodeKind::Jump: {
    auto *j = static_cast<Jump *>(s);
    switch (j->jump) {
    case JumpKind::Return:
      if (j->value) {
        // Evaluated for its effects; a probe returns nothing but a bench
        // probe's result (outside loop bodies, which run as callbacks).
        Val v = gen(j->value);
        if (returns_value_ && !returned_flag_ && j->value->type.is_intlike()) {
          llvm::Value *r = v.mem ? load_int(v.v, j->value->type) : v.v;
          b_.CreateRet(b_.CreateZExtOrTrunc(r, i64t()));
          return;
        }
      }
      gen_return();
      return;
    case JumpKind::Break:
      if (loops_.back().callback)
        b_.CreateRet(i64(1));
      else
        b_.CreateBr(loops_.back().brk);
      return;
    case JumpKind::Continue:
      if (loops_.back().callback)
        b_.CreateRet(i64(0));
      else
        b_.CreateBr(loops_.back().cont);
      return;
    }
    return;
  }
  case NodeKind::Block:
    gen_block(*static_cast<Block *>(s));
    return;
  default:
    fail(s->loc, "BUG: cannot generate code for this statement");
  }
}

void IRGen::gen_if(If &s) {
  auto *cond = gen_cond(s.cond);
  auto *then_bb = block("if.then");
  auto *else_bb = s.else_block ? block("if.else") : nullptr;
  auto *done = block("if.done");
  b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
  b_.SetInsertPoint(then_bb);
  gen_block(*s.then_block);
  if (!b_.GetInsertBlock()->getTerminator())
    b_.CreateBr(done);
  if (else_bb) {
    b_.SetInsertPoint(else_bb);
    gen_block(*s.else_block);
    if (!b_.GetInsertBlock()->getTerminator())
      b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
}

void IRGen::gen_while(While &s) {
  auto *head = block("while.head");
  auto *body = block("while.body");
  auto *done = block("while.done");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  b_.CreateCondBr(gen_cond(s.cond), body, done);
  b_.SetInsertPoint(body);
  loops_.push_back({done, head, false});
  gen_block(*s.body);
  loops_.pop_back();
  if (!b_.GetInsertBlock()->getTerminator())
    b_.CreateBr(head);
  b_.SetInsertPoint(done);
}

void IRGen::gen_for(For &s) {
  // The context block: the probe's ctx, the slot of every variable the
  // body uses (and the loop's own), the `returned` flag, and the range
  // start. It holds pointers, so it must live on the stack.
  struct Uses : Visitor<Uses> {
    std::set<std::string> names;
    using Visitor::visit;
    void visit(Variable &v) { names.insert(v.name); }
  } uses;
  uses.visit(*s.body);
  uses.names.insert(s.var->name);
  std::vector<std::string> names;
  for (const auto &[name, t] : var_types_)
    if (uses.names.count(name))
      names.push_back(name);
  uint32_t n = names.size();
  uint32_t flag_off = 8 * (n + 1), start_off = 8 * (n + 2);
  if (!stack_fits(8 * (n + 3))) {
    fail(s.loc, "the body of this for loop uses " + std::to_string(n) +
                    " variables: their addresses (8 bytes each) need more "
                    "of the 512-byte BPF stack than the probe leaves free; "
                    "use fewer variables inside the loop");
    return;
  }
  auto *cbctx = entry_alloca(8 * (n + 3), "forctx", /*stack_only=*/true);
  b_.CreateAlignedStore(ctx_, cbctx, llvm::Align(8));
  for (uint32_t i = 0; i < n; i++)
    b_.CreateAlignedStore(vars_[names[i]], byte_ptr(cbctx, 8 * (i + 1)),
                          llvm::Align(8));
  b_.CreateAlignedStore(i64(0), byte_ptr(cbctx, flag_off), llvm::Align(8));
  llvm::Value *start = nullptr, *end = nullptr;
  if (!s.map) {
    start = gen_scalar(s.start);
    end = gen_scalar(s.end);
    b_.CreateAlignedStore(start, byte_ptr(cbctx, start_off), llvm::Align(8));
  }

  // The callback.
  llvm::FunctionType *cb_ty =
      s.map ? llvm::FunctionType::get(i64t(), {ptrt(), ptrt(), ptrt(), ptrt()},
                                      false)
            : llvm::FunctionType::get(i64t(), {i64t(), ptrt()}, false);
  auto *cb =
      llvm::Function::Create(cb_ty, llvm::Function::InternalLinkage,
                             std::string(fn_->getName()) + "_for", *mod_);
  fn_locs_[cb->getName().str()] = s.loc;
  cb->setSection(".text");
  cb->addFnAttr(llvm::Attribute::NoUnwind);
  auto *di_ptr = di_->createPointerType(nullptr, 64);
  auto *di_u64 =
      di_->createBasicType("unsigned long", 64, llvm::dwarf::DW_ATE_unsigned);
  std::vector<std::pair<const char *, llvm::DIType *>> params =
      s.map ? std::vector<std::pair<const char *, llvm::DIType *>>{{"map",
                                                                    di_ptr},
                                                                   {"key",
                                                                    di_ptr},
                                                                   {"value",
                                                                    di_ptr},
                                                                   {"data",
                                                                    di_ptr}}
            : std::vector<std::pair<const char *, llvm::DIType *>>{
                  {"index", di_u64}, {"data", di_ptr}};
  std::vector<llvm::Metadata *> sig = {di_int()};
  for (auto &[pname, pt] : params)
    sig.push_back(pt);
  auto *sp = di_->createFunction(
      cu_, cb->getName(), cb->getName(), difile_, s.loc.begin.line,
      di_->createSubroutineType(di_->getOrCreateTypeArray(sig)),
      s.loc.begin.line, llvm::DINode::FlagPrototyped,
      llvm::DISubprogram::SPFlagDefinition |
          llvm::DISubprogram::SPFlagLocalToUnit);
  for (unsigned i = 0; i < params.size(); i++)
    di_->createParameterVariable(sp, params[i].first, i + 1, difile_,
                                 s.loc.begin.line, params[i].second, true);
  cb->setSubprogram(sp);

  // Save the probe's state, generate the callback, restore.
  auto saved_ip = b_.saveIP();
  auto saved_dl = b_.getCurrentDebugLocation();
  auto *saved_fn = fn_;
  auto *saved_ctx = ctx_;
  auto *saved_entry = entry_;
  auto saved_vars = vars_;
  auto saved_loops = loops_;
  auto *saved_flag = returned_flag_;
  auto *saved_temps = temps_base_;
  temps_base_ = nullptr;

  fn_ = cb;
  entry_ = llvm::BasicBlock::Create(*llctx_, "entry", cb);
  auto *body = llvm::BasicBlock::Create(*llctx_, "body", cb);
  b_.SetInsertPoint(body);
  b_.SetCurrentDebugLocation(
      llvm::DILocation::get(*llctx_, s.loc.begin.line, s.loc.begin.column, sp));
  llvm::Value *block_ptr = s.map ? cb->getArg(3) : cb->getArg(1);
  ctx_ = b_.CreateAlignedLoad(ptrt(), block_ptr, llvm::Align(8));
  for (uint32_t i = 0; i < n; i++)
    vars_[names[i]] = b_.CreateAlignedLoad(
        ptrt(), byte_ptr(block_ptr, 8 * (i + 1)), llvm::Align(8));
  returned_flag_ = byte_ptr(block_ptr, flag_off);
  loops_.push_back({nullptr, nullptr, true});

  auto *var = vars_[s.var->name];
  Type vt = var_types_[s.var->name];
  if (s.map) {
    MapGen &mg = map_of(s.map->name);
    auto *key = cb->getArg(1);
    auto *value = cb->getArg(2);
    if (vt.kind == TypeKind::Tuple && vt.fields.size() == 2) {
      zero(var, vt.size);
      const auto &kf = vt.fields[0];
      const auto &vf = vt.fields[1];
      store_value(byte_ptr(var, kf.offset), *kf.type, {key, true}, mg.key);
      if (mg.spec.agg != runtime::AggKind::None) {
        store_int(byte_ptr(var, vf.offset), sum_slots(mg, key), *vf.type);
      } else {
        store_value(byte_ptr(var, vf.offset), *vf.type, {value, true},
                    mg.value);
      }
    }
  } else {
    auto *first = b_.CreateAlignedLoad(i64t(), byte_ptr(block_ptr, start_off),
                                       llvm::Align(8));
    store_int(var, b_.CreateAdd(first, cb->getArg(0)), vt);
  }
  gen_block(*s.body);
  if (!b_.GetInsertBlock()->getTerminator())
    b_.CreateRet(i64(0));
  finish_entry(body);

  fn_ = saved_fn;
  temps_base_ = saved_temps;
  ctx_ = saved_ctx;
  entry_ = saved_entry;
  vars_ = saved_vars;
  loops_ = saved_loops;
  returned_flag_ = saved_flag;
  b_.restoreIP(saved_ip);
  b_.SetCurrentDebugLocation(saved_dl);

  if (s.map) {
    MapGen &mg = map_of(s.map->name);
    helper(BPF_FUNC_for_each_map_elem, i64t(), {mg.gv, cb, cbctx, i64(0)});
  } else {
    auto *count = b_.CreateSelect(b_.CreateICmpSGT(end, start),
                                  b_.CreateSub(end, start), i64(0));
    helper(BPF_FUNC_loop, i64t(), {count, cb, cbctx, i64(0)});
  }
  // A `return` inside the loop returns from the probe too.
  auto *flag =
      b_.CreateAlignedLoad(i64t(), byte_ptr(cbctx, flag_off), llvm::Align(8));
  auto *ret = block("for.return");
  auto *after = block("for.after");
  b_.CreateCondBr(b_.CreateICmpNE(flag, i64(0)), ret, after);
  b_.SetInsertPoint(ret);
  gen_return();
  b_.SetInsertPoint(after);
}

} // namespace ubtrace::codegen
