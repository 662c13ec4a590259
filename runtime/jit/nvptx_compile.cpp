// compile_nvptx(): lift every GPU probe into one NVPTX module, link the
// device runtime, optimise, and print PTX.
//
//   lift (registers as allocas) -> link runtime -> O1 (SSA, dispatchers
//   inlined) -> integer pointers folded -> atomic adds aggregated ->
//   internalize -> O2 (frames into registers, runtime inlined, dead code
//   gone) -> context-free probes lose their parameter -> PTX.
#include "runtime/abi.h"
#include "runtime/gpu/gpu_helper_ids.h"
#include "runtime/jit/nvptx_helpers.h"
#include "runtime/jit/nvptx_passes.h"
#include "runtime/jit/nvptx_runtime.h"
#include "runtime/jit/nvptx_target.h"

#include <linux/bpf.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <memory>
#include <mutex>
#include <set>

namespace ubtrace::jit {
namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

void initialize_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

Result<std::unique_ptr<llvm::TargetMachine>>
make_target_machine(const NvptxOptions &options) {
  initialize_nvptx();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target)
    return make_error("no NVPTX target in this LLVM: " + error);
  llvm::TargetOptions to;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, options.cpu, options.features, to, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return make_error("cannot make an NVPTX target machine for " + options.cpu);
  return tm;
}

// void NAME(ptr align 8 ctx) { entry(ctx); }: the probe ABI's signature
// around the lifted program (i64 entry(ptr)), which is inlined into it.
llvm::Function *make_wrapper(llvm::Module &module, llvm::Function *entry,
                             const std::string &name) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *type = llvm::FunctionType::get(
      llvm::Type::getVoidTy(ctx), {llvm::PointerType::getUnqual(ctx)}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // probe_abi.h: the context block is 8-byte aligned thread-local memory
  // the probe only reads.
  fn->addParamAttr(0, llvm::Attribute::getWithAlignment(ctx, llvm::Align(8)));
  fn->addParamAttr(0, llvm::Attribute::NoCapture);
  fn->addParamAttr(0, llvm::Attribute::ReadOnly);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateCall(entry, {fn->getArg(0)});
  b.CreateRetVoid();
  entry->setLinkage(llvm::GlobalValue::InternalLinkage);
  entry->addFnAttr(llvm::Attribute::AlwaysInline);
  return fn;
}

// A probe that reads nothing of its context becomes `void NAME()`: the
// injected call then passes nothing and builds no context block.
void drop_context(llvm::Function *&wrapper) {
  llvm::Module &module = *wrapper->getParent();
  auto *type = llvm::FunctionType::get(
      llvm::Type::getVoidTy(module.getContext()), false);
  auto *bare = llvm::Function::Create(type, wrapper->getLinkage(), "", module);
  bare->copyAttributesFrom(wrapper);
  bare->setAttributes(llvm::AttributeList::get(
      module.getContext(), wrapper->getAttributes().getFnAttrs(), {}, {}));
  bare->splice(bare->end(), wrapper);
  bare->takeName(wrapper);
  wrapper->eraseFromParent();
  wrapper = bare;
}

std::string print_ptx(llvm::Module &module, llvm::TargetMachine &tm,
                      std::string &error) {
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX target cannot print PTX";
    return {};
  }
  pm.run(module);
  return std::string(text.str());
}

} // namespace

vm::ContextInfo gpu_context_info() {
  return {abi::kGpuCtxArgs + 8 * kGpuMaxArgs, false, false};
}

const vm::HelperTable &gpu_helper_protos() {
  static const vm::HelperTable table = [] {
    vm::HelperTable t = vm::standard_helpers();
    const char *names[] = {
        "gpu_thread_idx_x", "gpu_thread_idx_y", "gpu_thread_idx_z",
        "gpu_block_idx_x",  "gpu_block_idx_y",  "gpu_block_idx_z",
        "gpu_block_dim_x",  "gpu_block_dim_y",  "gpu_block_dim_z",
        "gpu_grid_dim_x",   "gpu_grid_dim_y",   "gpu_grid_dim_z",
        "gpu_smid",         "gpu_warpid",       "gpu_laneid",
        "gpu_globaltimer"};
    for (int32_t i = 0; i < 16; ++i) {
      vm::HelperProto p;
      p.id = abi::kHelperGpuThreadIdxX + i;
      p.name = names[i];
      t.add(p);
    }
    {
      vm::HelperProto p;
      p.id = runtime::gpu::kHelperGpuKernelId;
      p.name = "gpu_kernel_id";
      p.args = {vm::ArgKind::Ctx, vm::ArgKind::None, vm::ArgKind::None,
                vm::ArgKind::None, vm::ArgKind::None};
      t.add(p);
      p.id = runtime::gpu::kHelperGpuProbeId;
      p.name = "gpu_probe_id";
      p.args = {vm::ArgKind::Ctx, vm::ArgKind::Scalar, vm::ArgKind::None,
                vm::ArgKind::None, vm::ArgKind::None};
      t.add(p);
    }
    for (int32_t id : {runtime::gpu::kHelperGpuAtomicMin,
                       runtime::gpu::kHelperGpuAtomicMax}) {
      vm::HelperProto p;
      p.id = id;
      p.name = id == runtime::gpu::kHelperGpuAtomicMin ? "gpu_atomic_min"
                                                       : "gpu_atomic_max";
      p.args = {vm::ArgKind::MapPtr, vm::ArgKind::MapValue, vm::ArgKind::Scalar,
                vm::ArgKind::Scalar, vm::ArgKind::None};
      t.add(p);
    }
    return t;
  }();
  return table;
}

Result<NvptxModule>
compile_nvptx(std::span<const NvptxProbe> probes,
              std::span<const runtime::gpu::DeviceMapLayout> object_maps,
              uint32_t table_entries, const NvptxOptions &options) {
  auto tm = make_target_machine(options);
  if (!tm)
    return std::move(tm).take_error();
  llvm::LLVMContext ctx;
  llvm::Module module("ubtrace_gpu_probes", ctx);
  module.setTargetTriple(kTriple);
  module.setDataLayout((*tm)->createDataLayout());

  NvptxHelpers helpers(module, object_maps, table_entries, options.host,
                       options.probe_ids);
  std::vector<MapConstants> maps = helpers.map_constants();
  std::vector<llvm::Function *> wrappers;
  std::vector<std::string> names;
  for (const NvptxProbe &probe : probes) {
    if (!probe.program)
      return make_error("BUG: GPU probe " + probe.function + " has no program");
    auto entry = lift_program(module, *probe.program, maps, helpers,
                              probe.function + "_bpf", options.lift);
    if (!entry)
      return make_error(probe.function + ": " + entry.error());
    wrappers.push_back(make_wrapper(module, *entry, probe.function));
    names.push_back(probe.function);
  }
  // What the lifter made (the runtime's functions come next).
  std::set<std::string> probe_code;
  for (llvm::Function &fn : module)
    if (!fn.isDeclaration())
      probe_code.insert(fn.getName().str());
  if (auto linked = nvptx::link_device_runtime(module); !linked)
    return std::move(linked).take_error();

  optimize_module(module, tm->get(), OptLevel::O1);
  for (llvm::Function &fn : module)
    if (!fn.isDeclaration())
      nvptx::fold_integer_pointers(fn);
  nvptx::aggregate_atomic_adds(module, probe_code, options.warp_aggregate);
  nvptx::internalize_except(module, names);
  optimize_module(module, tm->get(), options.level);

  NvptxModule out;
  out.map_table_entries = std::max<uint32_t>(table_entries, 1);
  for (llvm::Function *&wrapper : wrappers) {
    nvptx::ContextUse use = nvptx::analyse_context(*wrapper);
    if (!use.used)
      drop_context(wrapper);
    out.functions.push_back(
        {wrapper->getName().str(), use.used, use.used ? use.arg_mask : 0});
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os))
    return make_error("BUG: the GPU probe module is invalid: " + problems);
  if (getenv("UBTRACE_NVPTX_DUMP_IR"))
    module.print(llvm::errs(), nullptr);
  std::string error;
  out.ptx = print_ptx(module, **tm, error);
  if (!error.empty())
    return make_error(error);
  return out;
}

} // namespace ubtrace::jit
