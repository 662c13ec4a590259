#include "runtime/jit/nvptx_helpers.h"

#include "runtime/abi.h"
#include "runtime/gpu/gpu_helper_ids.h"
#include "runtime/gpu/probe_abi.h"

#include <linux/bpf.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <map>
#include <optional>

namespace ubtrace::jit {

using runtime::gpu::DeviceMapKind;
using runtime::gpu::DeviceMapLayout;

namespace {

constexpr int64_t kEinval = 22;

// The device runtime's C signatures: return ('p' pointer, 'i' u64, 'v'
// void) and arguments ('p', 'i').
struct RuntimeSignature {
  const char *name;
  char ret;
  const char *args;
};

constexpr RuntimeSignature kRuntime[] = {
    {"__ubt_array_lookup", 'p', "ppiiii"},
    {"__ubt_array_lookup_slot", 'p', "ppiiiii"},
    {"__ubt_array_update", 'i', "pppiiiiii"},
    {"__ubt_hash_lookup", 'p', "ppiiiii"},
    {"__ubt_hash_update", 'i', "pppiiiiiiiii"},
    {"__ubt_hash_delete", 'i', "ppiii"},
    {"__ubt_ring_output", 'i', "ppii"},
    {"__ubt_atomic_add_uniform", 'v', "pi"},
    {"__ubt_atomic_add", 'v', "pi"},
    {"__ubt_atomic_min", 'v', "pii"},
    {"__ubt_atomic_max", 'v', "pii"},
    {"__ubt_probe_read", 'i', "pip"},
    {"__ubt_probe_read_str", 'i', "pip"},
};

llvm::Value *as_ptr(llvm::IRBuilderBase &b, llvm::Value *v) {
  return b.CreateIntToPtr(v, b.getPtrTy());
}

// A special register, zero-extended to the u64 BPF code expects.
llvm::Value *sreg(llvm::IRBuilderBase &b, llvm::Intrinsic::ID id) {
  llvm::Value *v = b.CreateIntrinsic(id, {}, {});
  return v->getType()->isIntegerTy(64) ? v : b.CreateZExt(v, b.getInt64Ty());
}

// The special register behind each GPU builtin helper.
llvm::Intrinsic::ID gpu_register(int32_t id) {
  switch (id) {
  case abi::kHelperGpuThreadIdxX:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x;
  case abi::kHelperGpuThreadIdxY:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y;
  case abi::kHelperGpuThreadIdxZ:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z;
  case abi::kHelperGpuBlockIdxX:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x;
  case abi::kHelperGpuBlockIdxY:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y;
  case abi::kHelperGpuBlockIdxZ:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z;
  case abi::kHelperGpuBlockDimX:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x;
  case abi::kHelperGpuBlockDimY:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y;
  case abi::kHelperGpuBlockDimZ:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z;
  case abi::kHelperGpuGridDimX:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x;
  case abi::kHelperGpuGridDimY:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y;
  case abi::kHelperGpuGridDimZ:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z;
  case abi::kHelperGpuSmId:
  case BPF_FUNC_get_smp_processor_id:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_smid;
  case abi::kHelperGpuWarpId:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_warpid;
  case abi::kHelperGpuLaneId:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_laneid;
  case abi::kHelperGpuGlobalTimer:
  case BPF_FUNC_ktime_get_ns:
  case BPF_FUNC_ktime_get_boot_ns:
  case BPF_FUNC_ktime_get_coarse_ns:
  case BPF_FUNC_ktime_get_tai_ns:
    return llvm::Intrinsic::nvvm_read_ptx_sreg_globaltimer;
  default:
    return llvm::Intrinsic::not_intrinsic;
  }
}

// `i64 NAME(ptr, i64)`, internal and always inlined: a helper the lifted
// code calls whose body the module defines.
llvm::Function *inline_helper(llvm::Module &module, const char *name) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(i64, {llvm::PointerType::getUnqual(ctx), i64},
                              false),
      llvm::GlobalValue::InternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  return fn;
}

std::string helper_name(int32_t id) {
  if (const vm::HelperProto *p = vm::standard_helpers().find(id))
    return p->name + " (" + std::to_string(id) + ")";
  return std::to_string(id);
}

} // namespace

llvm::FunctionType *device_runtime_type(llvm::LLVMContext &ctx,
                                        const std::string &name) {
  for (const RuntimeSignature &sig : kRuntime) {
    if (name != sig.name)
      continue;
    auto type_of = [&](char c) -> llvm::Type * {
      switch (c) {
      case 'p':
        return llvm::PointerType::getUnqual(ctx);
      case 'i':
        return llvm::Type::getInt64Ty(ctx);
      default:
        return llvm::Type::getVoidTy(ctx);
      }
    };
    std::vector<llvm::Type *> args;
    for (const char *a = sig.args; *a; ++a)
      args.push_back(type_of(*a));
    return llvm::FunctionType::get(type_of(sig.ret), args, false);
  }
  return nullptr;
}

NvptxHelpers::NvptxHelpers(llvm::Module &module,
                           std::span<const DeviceMapLayout> object_maps,
                           uint32_t table_entries, const NvptxHostInfo &host,
                           std::span<const NvptxProbeIdRule> probe_ids)
    : module_(module), maps_(object_maps.begin(), object_maps.end()),
      host_(host), probe_ids_(probe_ids.begin(), probe_ids.end()) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *type = llvm::ArrayType::get(llvm::Type::getInt64Ty(ctx),
                                    std::max<uint32_t>(table_entries, 1));
  // Internal, in the constant state space, and externally initialised: the
  // agent writes the values into the PTX, so nothing may fold them.
  table_ = new llvm::GlobalVariable(
      module, type, /*isConstant=*/true, llvm::GlobalValue::InternalLinkage,
      llvm::Constant::getNullValue(type), UBT_GPU_MAP_TABLE, nullptr,
      llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/4,
      /*isExternallyInitialized=*/true);
  table_->setAlignment(llvm::Align(8));
  for (const DeviceMapLayout &l : maps_)
    if (l.kind == DeviceMapKind::ThreadLocal)
      scratch_bytes_ = std::max(scratch_bytes_, l.bytes);
}

std::vector<MapConstants> NvptxHelpers::map_constants() const {
  std::vector<MapConstants> out;
  for (size_t i = 0; i < maps_.size(); ++i)
    out.push_back({kHandleBase + i, 0});
  return out;
}

llvm::Function *NvptxHelpers::runtime_function(const char *name) {
  if (llvm::Function *fn = module_.getFunction(name))
    return fn;
  auto *fn =
      llvm::Function::Create(device_runtime_type(module_.getContext(), name),
                             llvm::GlobalValue::ExternalLinkage, name, module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

llvm::Value *NvptxHelpers::base_of(llvm::IRBuilderBase &b,
                                   const DeviceMapLayout &layout) {
  llvm::Value *slot = b.CreateConstInBoundsGEP2_64(table_->getValueType(),
                                                   table_, 0, layout.index);
  llvm::Value *address =
      b.CreateAlignedLoad(b.getInt64Ty(), slot, llvm::Align(8), "map.base");
  return as_ptr(b, address);
}

// Each function's own scratch memory (a probe and each callback), at the
// top of its entry block.
llvm::Value *NvptxHelpers::scratch_of(llvm::IRBuilderBase &b) {
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  if (auto it = scratch_.find(fn); it != scratch_.end())
    return it->second;
  llvm::IRBuilder<> eb(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  auto *alloca = eb.CreateAlloca(
      llvm::ArrayType::get(eb.getInt8Ty(),
                           std::max<uint64_t>(scratch_bytes_, 8)),
      nullptr, "scratch");
  alloca->setAlignment(llvm::Align(16));
  scratch_[fn] = alloca;
  return alloca;
}

void NvptxHelpers::fill_case(llvm::IRBuilderBase &b, Op op,
                             const DeviceMapLayout &l, llvm::Function *fn) {
  auto arg = [&](unsigned i) { return fn->getArg(i); };
  auto c = [&](uint64_t v) { return b.getInt64(v); };
  llvm::Value *null = llvm::ConstantPointerNull::get(b.getPtrTy());
  auto call = [&](const char *name, std::vector<llvm::Value *> args) {
    return b.CreateCall(runtime_function(name), args);
  };
  // The scratch map: entry `key` of the calling function's local memory.
  auto local = [&](llvm::Value *key, llvm::Value *scratch) {
    llvm::Value *index =
        b.CreateZExt(b.CreateAlignedLoad(b.getInt32Ty(), key, llvm::Align(1)),
                     b.getInt64Ty());
    llvm::Value *at = b.CreateInBoundsGEP(
        b.getInt8Ty(), scratch, b.CreateMul(index, c(l.value_stride)));
    return b.CreateSelect(b.CreateICmpULT(index, c(l.max_entries)), at, null);
  };
  switch (op) {
  case Op::Lookup:
    switch (l.kind) {
    case DeviceMapKind::Array:
      b.CreateRet(call("__ubt_array_lookup",
                       {base_of(b, l), arg(1), c(l.max_entries),
                        c(l.value_stride), c(l.slot_stride), c(l.slots)}));
      return;
    case DeviceMapKind::Hash:
      b.CreateRet(call("__ubt_hash_lookup",
                       {base_of(b, l), arg(1), c(l.key_size), c(l.key_stride),
                        c(l.value_stride), c(l.capacity), c(l.values_offset)}));
      return;
    case DeviceMapKind::ThreadLocal:
      b.CreateRet(local(arg(1), arg(2)));
      return;
    case DeviceMapKind::Ring:
    case DeviceMapKind::None:
      b.CreateRet(null);
      return;
    }
    break;
  case Op::LookupSlot: {
    llvm::Value *first = b.CreateICmpEQ(arg(2), c(0));
    switch (l.kind) {
    case DeviceMapKind::Array:
      b.CreateRet(call("__ubt_array_lookup_slot",
                       {base_of(b, l), arg(1), arg(2), c(l.max_entries),
                        c(l.value_stride), c(l.slot_stride), c(l.slots)}));
      return;
    case DeviceMapKind::Hash: {
      llvm::Value *p =
          call("__ubt_hash_lookup",
               {base_of(b, l), arg(1), c(l.key_size), c(l.key_stride),
                c(l.value_stride), c(l.capacity), c(l.values_offset)});
      b.CreateRet(b.CreateSelect(first, p, null));
      return;
    }
    case DeviceMapKind::ThreadLocal:
      b.CreateRet(b.CreateSelect(first, local(arg(1), arg(3)), null));
      return;
    case DeviceMapKind::Ring:
    case DeviceMapKind::None:
      b.CreateRet(null);
      return;
    }
    break;
  }
  case Op::Update:
    switch (l.kind) {
    case DeviceMapKind::Array:
      b.CreateRet(call("__ubt_array_update",
                       {base_of(b, l), arg(1), arg(2), arg(3), c(l.max_entries),
                        c(l.value_size), c(l.value_stride), c(l.slot_stride),
                        c(l.slots)}));
      return;
    case DeviceMapKind::Hash:
      b.CreateRet(call("__ubt_hash_update",
                       {base_of(b, l), arg(1), arg(2), arg(3), c(l.key_size),
                        c(l.value_size), c(l.key_stride), c(l.value_stride),
                        c(l.capacity), c(l.values_offset), c(l.init_kind),
                        c(l.max_entries)}));
      return;
    case DeviceMapKind::ThreadLocal:
    case DeviceMapKind::Ring:
    case DeviceMapKind::None:
      b.CreateRet(c(uint64_t(-kEinval)));
      return;
    }
    break;
  case Op::Delete:
    if (l.kind == DeviceMapKind::Hash) {
      b.CreateRet(
          call("__ubt_hash_delete", {base_of(b, l), arg(1), c(l.key_size),
                                     c(l.key_stride), c(l.capacity)}));
      return;
    }
    b.CreateRet(c(uint64_t(-kEinval)));
    return;
  case Op::Output:
    if (l.kind == DeviceMapKind::Ring) {
      b.CreateRet(call("__ubt_ring_output",
                       {base_of(b, l), arg(1), arg(2), c(l.capacity)}));
      return;
    }
    b.CreateRet(c(uint64_t(-kEinval)));
    return;
  }
}

// One switch over the map handles per operation, inlined into every call
// site: with the handle a constant there, only the map's own case stays.
llvm::Function *NvptxHelpers::dispatcher(Op op) {
  if (auto it = dispatchers_.find(op); it != dispatchers_.end())
    return it->second;
  llvm::LLVMContext &ctx = module_.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::FunctionType *type = nullptr;
  const char *name = nullptr;
  switch (op) {
  case Op::Lookup:
    type = llvm::FunctionType::get(ptr, {i64, ptr, ptr}, false);
    name = "__ubt_map_lookup";
    break;
  case Op::LookupSlot:
    type = llvm::FunctionType::get(ptr, {i64, ptr, i64, ptr}, false);
    name = "__ubt_map_lookup_slot";
    break;
  case Op::Update:
    type = llvm::FunctionType::get(i64, {i64, ptr, ptr, i64}, false);
    name = "__ubt_map_update";
    break;
  case Op::Delete:
    type = llvm::FunctionType::get(i64, {i64, ptr}, false);
    name = "__ubt_map_delete";
    break;
  case Op::Output:
    type = llvm::FunctionType::get(i64, {i64, ptr, i64, i64}, false);
    name = "__ubt_ringbuf_output";
    break;
  }
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                    name, module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  auto *fallback = llvm::BasicBlock::Create(ctx, "unknown", fn);
  auto *sw = b.CreateSwitch(fn->getArg(0), fallback, maps_.size());
  for (size_t i = 0; i < maps_.size(); ++i) {
    auto *block = llvm::BasicBlock::Create(ctx, "map" + std::to_string(i), fn);
    sw->addCase(b.getInt64(kHandleBase + i), block);
    b.SetInsertPoint(block);
    fill_case(b, op, maps_[i], fn);
  }
  b.SetInsertPoint(fallback);
  if (type->getReturnType()->isPointerTy())
    b.CreateRet(llvm::ConstantPointerNull::get(b.getPtrTy()));
  else
    b.CreateRet(b.getInt64(uint64_t(-kEinval)));
  dispatchers_[op] = fn;
  return fn;
}

// bpf_get_current_comm(buf, size): the traced process's name, NUL-padded.
llvm::Function *NvptxHelpers::comm_function() {
  if (comm_)
    return comm_;
  llvm::LLVMContext &ctx = module_.getContext();
  comm_ = inline_helper(module_, "__ubt_get_current_comm");
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", comm_));
  std::string name = host_.comm.substr(0, 15);
  llvm::Value *buf = comm_->getArg(0), *size = comm_->getArg(1);
  // Unrolled: 16 guarded byte stores fold to plain stores for size 16.
  for (uint32_t i = 0; i < 16; ++i) {
    auto *store = llvm::BasicBlock::Create(ctx, "byte", comm_);
    auto *next = llvm::BasicBlock::Create(ctx, "next", comm_);
    b.CreateCondBr(b.CreateICmpULT(b.getInt64(i), size), store, next);
    b.SetInsertPoint(store);
    uint8_t byte = i < name.size() ? uint8_t(name[i]) : 0;
    b.CreateStore(b.getInt8(byte),
                  b.CreateInBoundsGEP(b.getInt8Ty(), buf, b.getInt64(i)));
    b.CreateBr(next);
    b.SetInsertPoint(next);
  }
  b.CreateRet(b.getInt64(0));
  return comm_;
}

// i64 __ubt_probe_id(ptr ctx, i64 block): which attach point of the probe
// block `block` fired (NvptxProbeIdRule). One switch over the blocks, one
// over the kernel ids in each; inlined where the block is a constant, so
// only that block's rules stay.
llvm::Function *NvptxHelpers::probe_id_function() {
  if (probe_id_)
    return probe_id_;
  llvm::LLVMContext &ctx = module_.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  probe_id_ = inline_helper(module_, "__ubt_probe_id");
  llvm::Value *context = probe_id_->getArg(0);
  llvm::Value *block = probe_id_->getArg(1);

  // Per block: the id for each site, for any kernel and per kernel id.
  struct SiteIds {
    std::optional<uint64_t> at[2];
    bool late[2] = {false, false}; // at[s] is a late_probe_id base
  };
  struct BlockRules {
    SiteIds any;
    std::map<uint64_t, SiteIds> kernels;
  };
  std::map<uint64_t, BlockRules> blocks;
  for (const NvptxProbeIdRule &r : probe_ids_) {
    if (r.site > 1)
      continue;
    BlockRules &rules = blocks[r.block];
    SiteIds &ids = r.any_kernel ? rules.any : rules.kernels[r.kernel_id];
    if (!ids.at[r.site]) {
      ids.at[r.site] = r.any_kernel && r.late_kernel
                           ? runtime::gpu::late_probe_id(r.block, r.site, 0)
                           : r.id;
      ids.late[r.site] = r.any_kernel && r.late_kernel;
    }
  }

  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", probe_id_));
  if (blocks.empty()) {
    b.CreateRet(block);
    return probe_id_;
  }
  llvm::Value *kernel =
      b.CreateAlignedLoad(i64, context, llvm::Align(8), "kernel_id");
  llvm::Value *site = b.CreateAlignedLoad(
      b.getInt32Ty(),
      b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), context, abi::kGpuCtxSite),
      llvm::Align(4), "site");
  llvm::Value *at_exit = b.CreateICmpEQ(site, b.getInt32(UBT_GPU_SITE_EXIT));
  auto *unknown = llvm::BasicBlock::Create(ctx, "unknown_block", probe_id_);
  auto *by_block = b.CreateSwitch(block, unknown, blocks.size());
  b.SetInsertPoint(unknown);
  b.CreateRet(block);
  // The id for each site: this kernel's rule, else the block's any-kernel
  // rule, else the block itself.
  auto pick = [&](llvm::IRBuilderBase &ib, uint64_t first, const SiteIds &any,
                  const SiteIds *exact) {
    uint64_t id[2];
    bool late[2] = {false, false};
    for (int s = 0; s < 2; ++s) {
      id[s] = exact && exact->at[s] ? *exact->at[s]
              : any.at[s]           ? *any.at[s]
                                    : first;
      late[s] = !(exact && exact->at[s]) && any.at[s] && any.late[s];
    }
    llvm::Value *low = nullptr;
    auto value = [&](int s) -> llvm::Value * {
      if (!late[s])
        return ib.getInt64(id[s]);
      if (!low)
        low = ib.CreateAnd(kernel, ib.getInt64(0xffffffffull));
      return ib.CreateOr(low, ib.getInt64(id[s]));
    };
    if (id[0] == id[1] && late[0] == late[1])
      return value(0);
    return ib.CreateSelect(at_exit, value(1), value(0));
  };
  for (const auto &[first, rules] : blocks) {
    auto *bb = llvm::BasicBlock::Create(ctx, "block", probe_id_);
    by_block->addCase(b.getInt64(first), bb);
    b.SetInsertPoint(bb);
    if (rules.kernels.empty()) {
      b.CreateRet(pick(b, first, rules.any, nullptr));
      continue;
    }
    auto *other = llvm::BasicBlock::Create(ctx, "other_kernel", probe_id_);
    auto *by_kernel = b.CreateSwitch(kernel, other, rules.kernels.size());
    b.SetInsertPoint(other);
    b.CreateRet(pick(b, first, rules.any, nullptr));
    for (const auto &[kernel_id, ids] : rules.kernels) {
      auto *kb = llvm::BasicBlock::Create(ctx, "kernel", probe_id_);
      by_kernel->addCase(b.getInt64(kernel_id), kb);
      b.SetInsertPoint(kb);
      b.CreateRet(pick(b, first, rules.any, &ids));
    }
  }
  return probe_id_;
}

Result<llvm::Value *>
NvptxHelpers::call_helper(llvm::IRBuilderBase &b, int32_t id,
                          const std::array<llvm::Value *, 5> &args) {
  if (llvm::Intrinsic::ID reg = gpu_register(id);
      reg != llvm::Intrinsic::not_intrinsic)
    return sreg(b, reg);
  switch (id) {
  case BPF_FUNC_map_lookup_elem:
    return b.CreatePtrToInt(
        b.CreateCall(dispatcher(Op::Lookup),
                     {args[0], as_ptr(b, args[1]), scratch_of(b)}),
        b.getInt64Ty());
  case BPF_FUNC_map_lookup_percpu_elem:
    return b.CreatePtrToInt(
        b.CreateCall(dispatcher(Op::LookupSlot),
                     {args[0], as_ptr(b, args[1]),
                      b.CreateAnd(args[2], b.getInt64(0xffffffffu)),
                      scratch_of(b)}),
        b.getInt64Ty());
  case BPF_FUNC_map_update_elem:
    return b.CreateCall(dispatcher(Op::Update), {args[0], as_ptr(b, args[1]),
                                                 as_ptr(b, args[2]), args[3]});
  case BPF_FUNC_map_delete_elem:
    return b.CreateCall(dispatcher(Op::Delete), {args[0], as_ptr(b, args[1])});
  case BPF_FUNC_ringbuf_output:
    return b.CreateCall(dispatcher(Op::Output),
                        {args[0], as_ptr(b, args[1]), args[2], args[3]});
  case BPF_FUNC_get_current_pid_tgid:
    return b.getInt64((uint64_t(host_.pid) << 32) | host_.pid);
  case BPF_FUNC_get_current_uid_gid:
    return b.getInt64((uint64_t(host_.gid) << 32) | host_.uid);
  case BPF_FUNC_get_current_comm:
    return b.CreateCall(comm_function(), {as_ptr(b, args[0]), args[1]});
  case BPF_FUNC_get_prandom_u32: {
    // Not cryptographic, as the kernel's is not: the clock and the
    // thread's place in the grid, mixed.
    llvm::Value *x = b.CreateXor(
        sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_clock64),
        b.CreateShl(sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_globaltimer),
                    b.getInt64(17)));
    x = b.CreateXor(
        x, b.CreateMul(sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x),
                       b.getInt64(0x9e3779b97f4a7c15ull)));
    x = b.CreateXor(
        x, b.CreateMul(sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                       b.getInt64(0xc2b2ae3d27d4eb4full)));
    x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, b.getInt64(33))),
                    b.getInt64(0xff51afd7ed558ccdull));
    return b.CreateAnd(b.CreateLShr(x, b.getInt64(29)),
                       b.getInt64(0xffffffffu));
  }
  case runtime::gpu::kHelperGpuKernelId:
    return b.CreateAlignedLoad(b.getInt64Ty(), as_ptr(b, args[0]),
                               llvm::Align(8), "kernel_id");
  case runtime::gpu::kHelperGpuProbeId:
    return b.CreateCall(probe_id_function(), {as_ptr(b, args[0]), args[1]});
  // Reads through pointers: generic-address loads on the device, bounded
  // by the size, with null and the first 64 KiB read as a fault
  // (device_runtime.c says why that is all a GPU can check). User and
  // kernel variants are the same: a probe sees one (generic) address space.
  case BPF_FUNC_probe_read:
  case BPF_FUNC_probe_read_user:
  case BPF_FUNC_probe_read_kernel:
    return b.CreateCall(runtime_function("__ubt_probe_read"),
                        {as_ptr(b, args[0]), args[1], as_ptr(b, args[2])});
  case BPF_FUNC_probe_read_str:
  case BPF_FUNC_probe_read_user_str:
  case BPF_FUNC_probe_read_kernel_str:
    return b.CreateCall(runtime_function("__ubt_probe_read_str"),
                        {as_ptr(b, args[0]), args[1], as_ptr(b, args[2])});
  case runtime::gpu::kHelperGpuAtomicMin:
  case runtime::gpu::kHelperGpuAtomicMax:
    b.CreateCall(runtime_function(id == runtime::gpu::kHelperGpuAtomicMin
                                      ? "__ubt_atomic_min"
                                      : "__ubt_atomic_max"),
                 {as_ptr(b, args[1]), args[2], args[3]});
    return b.getInt64(0);
  default:
    return make_error("helper " + helper_name(id) +
                      " is not available in GPU probes");
  }
}

Result<llvm::Value *> NvptxHelpers::call_map_iterate(llvm::IRBuilderBase &,
                                                     uint32_t, llvm::Value *,
                                                     llvm::Function *,
                                                     llvm::Value *) {
  return make_error("iterating over a map (for) is not available in GPU "
                    "probes");
}

} // namespace ubtrace::jit
