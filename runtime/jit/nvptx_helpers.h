// How lifted GPU probes call helpers (lifter.h's HelperLowering for NVPTX):
//   - GPU builtins (abi::kHelperGpu*) and the process constants (pid, uid,
//     comm) become special-register reads and constants, inline;
//   - map and ring helpers call a per-module dispatcher on the map handle
//     (a constant after inlining, so the switch folds away) that calls the
//     device runtime's function for the map's layout with its sizes as
//     constants;
//   - the kernel id (func) is a load from the context; the attach point
//     that fired (probe) a per-module switch over the probe blocks, the
//     context's kernel id and site (NvptxOptions::probe_ids), folded to
//     the block's own rules at each call site;
//   - the scratch map is the calling function's own local memory;
//   - probe_read* / probe_read*_str call the device runtime's bounded
//     generic-address reads (no fault can be caught on a GPU: null and the
//     first 64 KiB read as a fault, anything else is loaded).
// Map handles are kHandleBase + the map's index in the object: they only
// need to be distinct constants the dispatchers switch on.
#pragma once

#include "runtime/gpu/device_maps.h"
#include "runtime/jit/lifter.h"
#include "runtime/jit/nvptx_target.h"

#include <map>

namespace llvm {
class AllocaInst;
class GlobalVariable;
class LLVMContext;
class FunctionType;
} // namespace llvm

namespace ubtrace::jit {

class NvptxHelpers final : public HelperLowering {
public:
  static constexpr uint64_t kHandleBase = 0x7562740000000000ull; // "ubt"

  NvptxHelpers(llvm::Module &module,
               std::span<const runtime::gpu::DeviceMapLayout> object_maps,
               uint32_t table_entries, const NvptxHostInfo &host,
               std::span<const NvptxProbeIdRule> probe_ids = {});

  // What the lifter's ld_imm64 of each object map loads.
  std::vector<MapConstants> map_constants() const;

  Result<llvm::Value *>
  call_helper(llvm::IRBuilderBase &b, int32_t id,
              const std::array<llvm::Value *, 5> &args) override;
  Result<llvm::Value *> call_map_iterate(llvm::IRBuilderBase &b, uint32_t map,
                                         llvm::Value *map_handle,
                                         llvm::Function *callback,
                                         llvm::Value *cb_ctx) override;

private:
  enum class Op : uint8_t { Lookup, LookupSlot, Update, Delete, Output };

  llvm::Function *dispatcher(Op op);
  llvm::Function *runtime_function(const char *name);
  llvm::Function *comm_function();
  llvm::Function *probe_id_function();
  llvm::Value *base_of(llvm::IRBuilderBase &b,
                       const runtime::gpu::DeviceMapLayout &layout);
  llvm::Value *scratch_of(llvm::IRBuilderBase &b);
  void fill_case(llvm::IRBuilderBase &b, Op op,
                 const runtime::gpu::DeviceMapLayout &layout,
                 llvm::Function *fn);

  llvm::Module &module_;
  std::vector<runtime::gpu::DeviceMapLayout> maps_;
  uint64_t scratch_bytes_ = 0;
  NvptxHostInfo host_;
  llvm::GlobalVariable *table_ = nullptr;
  std::map<Op, llvm::Function *> dispatchers_;
  std::map<llvm::Function *, llvm::AllocaInst *> scratch_;
  llvm::Function *comm_ = nullptr;
  std::vector<NvptxProbeIdRule> probe_ids_;
  llvm::Function *probe_id_ = nullptr;
};

// The device runtime's functions the helpers call, with their IR types.
// nvptx_runtime.cpp links their definitions in.
llvm::FunctionType *device_runtime_type(llvm::LLVMContext &ctx,
                                        const std::string &name);

} // namespace ubtrace::jit
