#include "codegen/irgen.h"

#include "ast/passes/config.h"
#include "ast/syscalls.h"
#include "ast/visitor.h"
#include "codegen/emit.h"
#include "codegen/value_types.h"

#include <algorithm>
#include <cstring>
#include <linux/bpf.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <stdexcept>
#include <sys/sysinfo.h>

namespace ubtrace::codegen {

using namespace ast;

IRGen::IRGen(ASTContext &ast, const Options &opts)
    : ast_(ast), opts_(opts), llctx_(std::make_unique<llvm::LLVMContext>()),
      mod_(std::make_unique<llvm::Module>("ubtrace", *llctx_)), b_(*llctx_) {
  mod_->setTargetTriple("bpfel");
  mod_->setDataLayout("e-m:e-p:64:64-i64:64-i128:128-n32:64-S128");
  di_ = std::make_unique<llvm::DIBuilder>(*mod_);
  // DWARF needs a file name: programs built in memory (ubtrace -l) have none.
  const std::string &name = ast.source().name;
  difile_ = di_->createFile(name.empty() ? "stdin" : name, ".");
  cu_ = di_->createCompileUnit(llvm::dwarf::DW_LANG_C, difile_, "ubtrace",
                               /*isOptimized=*/true, "", 0);
  mod_->addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                      llvm::DEBUG_METADATA_VERSION);
  mod_->addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
  ncpus_ = opts.ncpus ? opts.ncpus : static_cast<uint32_t>(get_nprocs_conf());
}

IRGen::~IRGen() = default;

void IRGen::fail(const Location &loc, const std::string &msg) {
  ast_.diags().error(loc) << msg;
}

bool IRGen::is_scalar(const Type &t) {
  switch (t.kind) {
  case TypeKind::Integer:
  case TypeKind::Boolean:
  case TypeKind::Pointer:
  case TypeKind::ProbeName:
  case TypeKind::Username:
  case TypeKind::StrError:
  case TypeKind::SignalName:
  case TypeKind::SyscallName:
  case TypeKind::KSym:
  case TypeKind::CgroupPath:
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
    return true;
  default:
    return false;
  }
}

Type IRGen::storage_type(const Type &t) {
  if (is_scalar(t) && !t.is_int() && t.kind != TypeKind::Boolean) {
    Type s = make_int(8, false);
    if (t.kind == TypeKind::Sum || t.kind == TypeKind::Min ||
        t.kind == TypeKind::Max || t.kind == TypeKind::Avg)
      s.is_signed = t.agg_signed;
    return s;
  }
  return t;
}

llvm::BasicBlock *IRGen::block(const std::string &name) {
  return llvm::BasicBlock::Create(*llctx_, name, fn_);
}

// Values above this size, and any slot once the probe's stack passes the
// budget, go to the temps area: BPF allows 512 bytes of stack for a probe and
// its callbacks together, and LLVM needs some for spills.
static constexpr uint32_t kMaxStackTemp = 64;
static constexpr uint32_t kStackBudget = 256;
// The BPF stack (512 bytes per frame) less what LLVM needs for its spills.
static constexpr uint32_t kStackOnlyLimit = 448;

bool IRGen::stack_fits(uint32_t size) const {
  return stack_used_ + (size + 7) / 8 * 8 <= kStackOnlyLimit;
}

llvm::Value *IRGen::entry_alloca(uint32_t size, const std::string &name,
                                 bool stack_only) {
  uint32_t bytes = (std::max<uint32_t>(size, 1) + 7) / 8 * 8;
  if (!stack_only &&
      (bytes > kMaxStackTemp || stack_used_ + bytes > kStackBudget))
    return temps_ptr(bytes);
  stack_used_ += bytes;
  llvm::IRBuilder<> eb(entry_, entry_->begin());
  auto *ty = llvm::ArrayType::get(b_.getInt8Ty(), std::max<uint32_t>(size, 1));
  auto *a = eb.CreateAlloca(ty, nullptr, name);
  a->setAlignment(llvm::Align(8));
  return a;
}

llvm::Value *IRGen::temps_ptr(uint32_t bytes) {
  if (!temps_base_) {
    // Looked up at the end of the entry block (the allocas stay at its top);
    // finish_entry checks it for null.
    llvm::IRBuilder<> eb(entry_);
    eb.SetCurrentDebugLocation(b_.getCurrentDebugLocation());
    auto &sm = map_of(abi::kScratchMap);
    auto *key = eb.CreateAlloca(b_.getInt32Ty(), nullptr, "tkey");
    eb.CreateAlignedStore(b_.getInt32(1), key, llvm::Align(4));
    auto *fty = llvm::FunctionType::get(ptrt(), {ptrt(), ptrt()}, false);
    auto *callee =
        eb.CreateIntToPtr(eb.getInt64(BPF_FUNC_map_lookup_elem), ptrt());
    auto *temps = eb.CreateCall(fty, callee, {sm.gv, key}, "temps");
    temps->addRetAttr(
        llvm::Attribute::getWithAlignment(*llctx_, llvm::Align(8)));
    temps_base_ = temps;
  }
  uint32_t off = temps_off_;
  temps_off_ += bytes;
  temps_size_ = std::max(temps_size_, temps_off_);
  return byte_ptr(temps_base_, off);
}

void IRGen::finish_entry(llvm::BasicBlock *body) {
  llvm::IRBuilder<> eb(entry_);
  eb.SetCurrentDebugLocation(b_.getCurrentDebugLocation());
  if (!temps_base_) {
    eb.CreateBr(body);
    return;
  }
  auto *none = llvm::BasicBlock::Create(*llctx_, "temps.none", fn_);
  eb.CreateCondBr(eb.CreateIsNull(temps_base_), none, body);
  llvm::IRBuilder<> nb(none);
  nb.SetCurrentDebugLocation(b_.getCurrentDebugLocation());
  nb.CreateRet(nb.getInt64(0));
  temps_base_ = nullptr;
}

llvm::Value *IRGen::byte_ptr(llvm::Value *base, uint64_t offset) {
  if (offset == 0)
    return base;
  return b_.CreateInBoundsGEP(b_.getInt8Ty(), base, b_.getInt64(offset));
}

static llvm::Type *int_type(llvm::LLVMContext &c, uint32_t size) {
  return llvm::Type::getIntNTy(c, 8 * std::max<uint32_t>(size, 1));
}

// Integers in memory are naturally aligned: stack slots and map values are
// 8-aligned and tuples, records and C structs lay fields out aligned.
static llvm::Align natural(uint32_t size) {
  return llvm::Align(size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1);
}

llvm::Value *IRGen::load_int(llvm::Value *ptr, const Type &t) {
  uint32_t size = t.size ? t.size : 8;
  auto *v = b_.CreateLoad(int_type(*llctx_, size), ptr);
  v->setAlignment(natural(size));
  if (size == 8)
    return v;
  bool sign = t.is_int() && t.is_signed;
  return sign ? b_.CreateSExt(v, i64t()) : b_.CreateZExt(v, i64t());
}

void IRGen::store_int(llvm::Value *ptr, llvm::Value *v, const Type &t) {
  uint32_t size = t.size ? t.size : 8;
  if (v->getType() != i64t())
    v = b_.CreateZExtOrTrunc(v, i64t());
  if (size != 8)
    v = b_.CreateTrunc(v, int_type(*llctx_, size));
  auto *s = b_.CreateStore(v, ptr);
  s->setAlignment(natural(size));
}

void IRGen::zero(llvm::Value *ptr, uint32_t size) {
  if (size == 0)
    return;
  if (size <= 256) {
    uint32_t off = 0;
    for (; off + 8 <= size; off += 8)
      b_.CreateAlignedStore(i64(0), byte_ptr(ptr, off), llvm::Align(1));
    for (; off < size; off++)
      b_.CreateStore(b_.getInt8(0), byte_ptr(ptr, off));
    return;
  }
  // Large: a loop of 8-byte stores, then the tail.
  uint32_t words = size / 8;
  auto *pre = b_.GetInsertBlock();
  auto *loop = block("zero.loop");
  auto *done = block("zero.done");
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  auto *i = b_.CreatePHI(i64t(), 2);
  i->addIncoming(i64(0), pre);
  auto *p = b_.CreateInBoundsGEP(b_.getInt8Ty(), ptr, b_.CreateMul(i, i64(8)));
  b_.CreateAlignedStore(i64(0), p, llvm::Align(1));
  auto *next = b_.CreateAdd(i, i64(1));
  i->addIncoming(next, loop);
  b_.CreateCondBr(b_.CreateICmpULT(next, i64(words)), loop, done);
  b_.SetInsertPoint(done);
  for (uint32_t off = words * 8; off < size; off++)
    b_.CreateStore(b_.getInt8(0), byte_ptr(ptr, off));
}

void IRGen::copy(llvm::Value *dst, llvm::Value *src, uint32_t size) {
  if (size == 0 || dst == src)
    return;
  if (size <= 256) {
    uint32_t off = 0;
    for (; off + 8 <= size; off += 8) {
      auto *v =
          b_.CreateAlignedLoad(i64t(), byte_ptr(src, off), llvm::Align(1));
      b_.CreateAlignedStore(v, byte_ptr(dst, off), llvm::Align(1));
    }
    for (; off < size; off++) {
      auto *v = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(src, off));
      b_.CreateStore(v, byte_ptr(dst, off));
    }
    return;
  }
  uint32_t words = size / 8;
  auto *pre = b_.GetInsertBlock();
  auto *loop = block("copy.loop");
  auto *done = block("copy.done");
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  auto *i = b_.CreatePHI(i64t(), 2);
  i->addIncoming(i64(0), pre);
  auto *off = b_.CreateMul(i, i64(8));
  auto *v = b_.CreateAlignedLoad(
      i64t(), b_.CreateInBoundsGEP(b_.getInt8Ty(), src, off), llvm::Align(1));
  b_.CreateAlignedStore(v, b_.CreateInBoundsGEP(b_.getInt8Ty(), dst, off),
                        llvm::Align(1));
  auto *next = b_.CreateAdd(i, i64(1));
  i->addIncoming(next, loop);
  b_.CreateCondBr(b_.CreateICmpULT(next, i64(words)), loop, done);
  b_.SetInsertPoint(done);
  for (uint32_t o = words * 8; o < size; o++) {
    auto *x = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(src, o));
    b_.CreateStore(x, byte_ptr(dst, o));
  }
}

llvm::Value *IRGen::to_mem(Val v, const Type &t) {
  if (v.mem)
    return v.v;
  Type st = storage_type(t);
  auto *slot = entry_alloca(std::max<uint32_t>(st.size, 8), "spill");
  store_int(slot, v.v, st.size ? st : make_int(8, false));
  return slot;
}

void IRGen::store_value(llvm::Value *dst, const Type &to, Val v,
                        const Type &from) {
  Type st = storage_type(to);
  if (is_scalar(st) || st.kind == TypeKind::Boolean) {
    llvm::Value *x = v.mem ? load_int(v.v, storage_type(from)) : v.v;
    store_int(dst, x, st);
    return;
  }
  llvm::Value *src = to_mem(v, from);
  switch (st.kind) {
  case TypeKind::String:
  case TypeKind::Buffer: {
    // Strings of different capacity: copy what fits, zero the rest.
    uint32_t n = std::min(st.size, from.size);
    if (n < st.size)
      zero(dst, st.size);
    copy(dst, src, n);
    if (st.kind == TypeKind::String && n == st.size && from.size > st.size)
      b_.CreateStore(b_.getInt8(0), byte_ptr(dst, st.size - 1));
    return;
  }
  case TypeKind::Tuple:
  case TypeKind::Record: {
    if (from.kind == st.kind && from.fields.size() == st.fields.size() &&
        from.size == st.size) {
      bool same = true;
      for (size_t i = 0; i < st.fields.size(); i++)
        same &= st.fields[i].name == from.fields[i].name &&
                st.fields[i].offset == from.fields[i].offset &&
                same_type(*st.fields[i].type, *from.fields[i].type) &&
                st.fields[i].type->size == from.fields[i].type->size;
      if (same) {
        copy(dst, src, st.size);
        return;
      }
    }
    // Field by field (a field widened by type unification; a record's
    // fields found by name, in whatever order the value has them).
    zero(dst, st.size);
    for (size_t i = 0; i < st.fields.size() && i < from.fields.size(); i++) {
      const auto &tf = st.fields[i];
      const Field *ff = st.kind == TypeKind::Record && from.kind == st.kind
                            ? from.field(tf.name)
                            : &from.fields[i];
      if (!ff)
        continue;
      Val fv;
      fv.mem = true;
      fv.v = byte_ptr(src, ff->offset);
      store_value(byte_ptr(dst, tf.offset), *tf.type, fv, *ff->type);
    }
    return;
  }
  default:
    copy(dst, src, std::min(st.size, from.size));
    return;
  }
}

llvm::Value *IRGen::helper(int id, llvm::Type *ret,
                           std::vector<llvm::Value *> args) {
  std::vector<llvm::Type *> types;
  for (auto *a : args)
    types.push_back(a->getType());
  auto *fty = llvm::FunctionType::get(ret, types, false);
  auto *callee = b_.CreateIntToPtr(i64(static_cast<uint64_t>(id)), ptrt());
  auto *call = b_.CreateCall(fty, callee, args);
  // Map values (and ring buffer records) are 8-byte aligned, in the kernel
  // and in the maps region. Saying so lets LLVM keep 8-byte accesses at
  // 8-byte offsets whole: an access it must assume unaligned becomes eight
  // byte loads, and a copy of a 64-byte string kept across a helper call
  // then spilled 64 registers, past the 512-byte stack.
  if (id == BPF_FUNC_map_lookup_elem || id == BPF_FUNC_map_lookup_percpu_elem ||
      id == BPF_FUNC_ringbuf_reserve)
    call->addRetAttr(
        llvm::Attribute::getWithAlignment(*llctx_, llvm::Align(8)));
  return call;
}

llvm::Value *IRGen::var_slot(const std::string &name) {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second;
}

void IRGen::collect_vars(Block &body) {
  struct Collector : Visitor<Collector> {
    std::map<std::string, Type> &types;
    explicit Collector(std::map<std::string, Type> &t) : types(t) {}
    using Visitor::visit;
    void note(const Variable &v) {
      // Scalars keep their own type (a pointer keeps its pointee, a probe
      // id or a username still prints as one); aggregations read into a
      // variable become integers.
      Type t = v.type.is_aggregation() ? storage_type(v.type) : v.type;
      if (t.is_none())
        return;
      auto [it, inserted] = types.try_emplace(v.name, t);
      if (inserted)
        return;
      // type_str, not same_type: strings of other sizes inside a tuple or
      // record make another slot type even when the totals are equal.
      if (it->second.size < t.size || it->second.kind != t.kind ||
          type_str(it->second) != type_str(t)) {
        Type c = common_type(it->second, t);
        if (!c.is_none())
          it->second = c;
        else if (t.size > it->second.size)
          it->second = t;
      }
    }
    void visit(Variable &v) { note(v); }
  } c(var_types_);
  c.visit(body);
  // Every use of a variable reads its slot as the slot's (widest) type.
  struct Retype : Visitor<Retype> {
    std::map<std::string, Type> &types;
    explicit Retype(std::map<std::string, Type> &t) : types(t) {}
    using Visitor::visit;
    void visit(Variable &v) {
      if (auto it = types.find(v.name); it != types.end())
        v.type = it->second;
    }
  } r(var_types_);
  r.visit(body);
}

// The bundle's kind of each probe kind a backend runs. The attach point
// pass gives no attach point a kind that no backend runs.
runtime::ProbeKind IRGen::runtime_kind(ProbeKind k) {
  switch (k) {
  case ProbeKind::Begin:
    return runtime::ProbeKind::Begin;
  case ProbeKind::End:
    return runtime::ProbeKind::End;
  case ProbeKind::Interval:
    return runtime::ProbeKind::Interval;
  case ProbeKind::Self:
    return runtime::ProbeKind::SelfSignal;
  case ProbeKind::Bench:
    return runtime::ProbeKind::Bench;
  case ProbeKind::Uprobe:
    return runtime::ProbeKind::Uprobe;
  case ProbeKind::Uretprobe:
    return runtime::ProbeKind::Uretprobe;
  case ProbeKind::Usdt:
    return runtime::ProbeKind::Usdt;
  case ProbeKind::Profile:
  case ProbeKind::Software: // cpu-clock and task-clock: the same sampler
    return runtime::ProbeKind::Profile;
  case ProbeKind::Hardware: // (and the other software events: see below)
  case ProbeKind::Watchpoint:
  case ProbeKind::AsyncWatchpoint:
    return runtime::ProbeKind::PerfEvent;
  case ProbeKind::Test:
    return runtime::ProbeKind::Test;
  case ProbeKind::Tracepoint:
    return runtime::ProbeKind::Syscall;
  case ProbeKind::GpuKernel:
    return runtime::ProbeKind::GpuKernelEntry;
  case ProbeKind::GpuKernelRet:
    return runtime::ProbeKind::GpuKernelExit;
#define UBT_PROBE_KIND(id, name, alias, backend, set) UBT_CASE_IF_##backend(id)
#include "ast/probe_kinds.def"
#undef UBT_PROBE_KIND
    break;
  }
  throw std::logic_error("codegen: probe kind " +
                         std::string(probe_kind_name(k)) +
                         " has no backend (the attach point pass lets none "
                         "through)");
}

void IRGen::gen_probe(Probe &p, size_t index) {
  gpu_ = false;
  size_t usdt = 0;
  probe_targets_.clear();
  for (auto *ap : p.attach_points) {
    Backend backend = backend_of(*ap->kind);
    gpu_ |= backend == Backend::Gpu;
    usdt += *ap->kind == ProbeKind::Usdt;
    // uprobes and USDT probes name a binary; profile, perf event and
    // tracepoint probes run in the traced process without one, and
    // uaddr() there means the program's own symbols ("").
    bool names_binary = *ap->kind == ProbeKind::Uprobe ||
                        *ap->kind == ProbeKind::Uretprobe ||
                        *ap->kind == ProbeKind::Usdt;
    if (backend == Backend::Userspace)
      probe_targets_.insert(names_binary ? ap->target : std::string());
  }
  usdt_ = usdt > 0 && usdt == p.attach_points.size();
  mixed_usdt_ = usdt > 0 && !usdt_;
  at_return_ = !p.attach_points.empty();
  for (auto *ap : p.attach_points)
    at_return_ &= *ap->kind == ProbeKind::Uretprobe;
  // A bench or test probe's `return N` is its program's result (non-zero
  // skips the benchmark, fails the test); other probes return nothing.
  returns_value_ = !p.attach_points.empty();
  for (auto *ap : p.attach_points)
    returns_value_ &=
        *ap->kind == ProbeKind::Bench || *ap->kind == ProbeKind::Test;
  reads_entry_args_ = false;
  std::string name = "p" + std::to_string(index);
  std::string section = (gpu_ ? "ubtrace_gpu/" : "uprobe/") + name;
  auto *fty = llvm::FunctionType::get(i64t(), {ptrt()}, false);
  fn_ =
      llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, *mod_);
  fn_->setSection(section);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  ctx_ = fn_->getArg(0);
  ctx_->setName("ctx");

  // BTF func info: a subprogram for every program.
  auto *sp_ty = di_->createSubroutineType(di_->getOrCreateTypeArray(
      {di_int(), di_->createPointerType(nullptr, 64)}));
  fn_locs_[name] = p.attach_points.empty() ? p.loc
                                           : p.attach_points.front()->loc +
                                                 p.attach_points.back()->loc;
  auto *sp = di_->createFunction(
      cu_, name, name, difile_, p.loc.begin.line, sp_ty, p.loc.begin.line,
      llvm::DINode::FlagPrototyped, llvm::DISubprogram::SPFlagDefinition);
  // Named parameters: the kernel rejects BTF functions with unnamed ones.
  di_->createParameterVariable(sp, "ctx", 1, difile_, p.loc.begin.line,
                               di_->createPointerType(nullptr, 64), true);
  fn_->setSubprogram(sp);

  entry_ = llvm::BasicBlock::Create(*llctx_, "entry", fn_);
  auto *body = llvm::BasicBlock::Create(*llctx_, "body", fn_);
  b_.SetInsertPoint(body);
  b_.SetCurrentDebugLocation(
      llvm::DILocation::get(*llctx_, p.loc.begin.line, p.loc.begin.column, sp));

  vars_.clear();
  var_types_.clear();
  loops_.clear();
  temps_off_ = 0;
  stack_used_ = 0;
  temps_base_ = nullptr;
  returned_flag_ = nullptr;
  collect_vars(*p.body);
  for (const auto &[vname, t] : var_types_) {
    auto *slot = entry_alloca(std::max<uint32_t>(t.size, 8), vname);
    vars_[vname] = slot;
    zero(slot, std::max<uint32_t>(t.size, 8));
  }

  if (p.pred) {
    auto *cond = gen_cond(p.pred);
    auto *go = block("pred.true");
    auto *skip = block("pred.false");
    b_.CreateCondBr(cond, go, skip);
    b_.SetInsertPoint(skip);
    b_.CreateRet(i64(0));
    b_.SetInsertPoint(go);
  }
  gen_block(*p.body);
  if (!b_.GetInsertBlock()->getTerminator())
    b_.CreateRet(i64(0));

  // The entry block holds the allocas (and zeroing); then the body.
  finish_entry(body);

  // Tracepoint events, in the order of probe_syscall_events.
  auto layout =
      ast::syscall_args_layout(ast::probe_syscall_events(p.attach_points));
  size_t event = 0;
  for (auto *ap : p.attach_points) {
    runtime::ProbeSpec ps;
    ps.kind = ap->perf_event ? runtime::ProbeKind::PerfEvent
                             : runtime_kind(*ap->kind);
    ps.name = ap->name();
    ps.section = section;
    ps.target = ap->target;
    ps.function = ap->func;
    ps.provider = ap->ns;
    ps.lang = ap->lang;
    ps.offset = ap->offset;
    ps.has_offset = ap->has_offset;
    ps.address = ap->has_address ? ap->address : 0;
    ps.interval_ns = ap->period_ns;
    ps.perf_type = ap->perf_type;
    ps.perf_config = ap->perf_config;
    ps.perf_config1 = ap->perf_config1;
    ps.perf_config2 = ap->perf_config2;
    ps.perf_in_kernel = ap->perf_in_kernel;
    ps.entry_args = reads_entry_args_;
    if (*ap->kind == ProbeKind::Tracepoint) {
      std::string why;
      for (const auto &e :
           ast::match_syscall_events(ap->target, ap->func, why)) {
        runtime::SyscallSite site{
            e.raw ? -1 : e.call->nr, e.exit, ast::syscall_event_name(e), {}};
        if (event < layout.sources.size())
          for (auto s : layout.sources[event])
            site.sources.push_back(static_cast<int8_t>(s));
        ps.syscalls.push_back(std::move(site));
        event++;
      }
    }
    if (auto where = sites_of(ap->loc); !where.empty())
      ps.where = where.front();
    bundle_.probes.push_back(ps);
  }
  fn_ = nullptr;
}

Result<Output> IRGen::run() {
  size_t errors = ast_.diags().error_count();
  declare_maps();
  size_t index = 0;
  for (auto *p : ast_.root->probes)
    gen_probe(*p, index++);
  if (ast_.diags().error_count() != errors)
    return make_error("code generation failed");
  finish_module();
  di_->finalize();
  // BPF has no memset/memcpy to call: keep the optimiser from turning our
  // zeroing and copying loops into calls to them.
  for (auto &f : *mod_)
    if (!f.isDeclaration())
      f.addFnAttr("no-builtins");

  std::string verify_err;
  llvm::raw_string_ostream vs(verify_err);
  if (llvm::verifyModule(*mod_, &vs))
    return make_error("BUG: generated invalid LLVM IR: " + vs.str());

  Output out;
  std::vector<BackendError> backend_errors;
  auto obj =
      emit_object(*mod_, opts_.want_ir ? &out.ir : nullptr, &backend_errors);
  if (!obj && !backend_errors.empty()) {
    report_backend_errors(backend_errors);
    return make_error("code generation failed");
  }
  if (!obj)
    return std::move(obj).take_error();
  if (auto sizes = program_sizes(*obj); sizes) {
    for (const auto &[section, insns] : *sizes) {
      auto it = fn_locs_.find(section.substr(section.find('/') + 1));
      if (insns > kMaxProgramInsns && it != fn_locs_.end())
        fail(it->second, "this probe compiles to " + std::to_string(insns) +
                             " BPF instructions, more than the " +
                             std::to_string(kMaxProgramInsns) +
                             " one program may have");
    }
    if (ast_.diags().error_count() != errors)
      return make_error("code generation failed");
  }
  bundle_.object = std::move(*obj);
  bundle_.positional_params = ast_.positional;
  bundle_.config = ast_.config;
  bundle_.unsafe = ast_.unsafe;
  if (opts_.want_disasm) {
    auto d = disassemble(bundle_.object);
    if (!d)
      return std::move(d).take_error();
    out.disasm = *d;
  }
  out.bundle = std::move(bundle_);
  return out;
}

void IRGen::report_backend_errors(const std::vector<BackendError> &errors) {
  std::set<std::string> seen;
  for (const auto &e : errors) {
    auto it = fn_locs_.find(e.function);
    Location loc = it != fn_locs_.end() ? it->second : Location{};
    // One error per function and kind: the stack limit is reported at
    // every access past it.
    if (!seen.insert(e.function + (e.stack_limit ? "/stack" : "/" + e.message))
             .second)
      continue;
    auto d = ast_.diags().error(loc);
    if (e.stack_limit) {
      d << (it == fn_locs_.end() || e.function.find("_for") == std::string::npos
                ? "this probe"
                : "this for loop's body")
        << " needs more than the 512 bytes of the BPF stack";
      d.hint("fewer variables or smaller values live at once (values over 64 "
             "bytes go to scratch memory, not the stack)");
    } else {
      d << "the BPF code generator cannot compile this: " << e.message;
    }
  }
}

Result<Output> generate(ASTContext &ctx, const Options &opts) {
  IRGen g(ctx, opts);
  return g.run();
}

} // namespace ubtrace::codegen
