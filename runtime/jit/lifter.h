// The lifter: a verified eBPF program becomes LLVM IR, one LLVM function per
// BPF function (the program, its subprograms, the callbacks of bpf_loop and
// bpf_for_each_map_elem). It is target-neutral: the same IR goes to x86-64
// through ORC (orc_jit.h), to a relocatable image for the in-target agent
// (remote_image.h) and, later, to NVPTX. Whatever differs per target is
// decided by the caller: the map constants (addresses in the address space
// the code will run in) and how a helper call is made (HelperLowering).
//
// What it produces, for an entry named E:
//   i64 @E(ptr %ctx)                          the program (r1 = ctx)
//   internal i64 @E.fn<pc>(i64 x5)            a subprogram or callback
//   internal i64 @E.each<pc>(ptr x4)          for_each adapter (see below)
// Registers are allocas promoted to SSA by the optimiser; each call of a
// BPF function gets its own stack frame (an alloca; r10 points at its end),
// sized by the verifier's stack depth.
//
// bpf_loop becomes a native loop calling the lifted callback directly.
// bpf_for_each_map_elem calls the map's iteration function (a
// vm::ForEachFn, in the agent and CLI ubt_map_iterate) with an adapter of
// the ForEachCallback signature that calls the lifted callback: iterating
// is the map's business, and a for_each over a hash map cannot be written
// against the lookup/update API anyway.
#pragma once

#include "runtime/result.h"
#include "runtime/vm/interpreter.h"
#include "runtime/vm/verifier.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace llvm {
class Function;
class FunctionType;
class IRBuilderBase;
class Module;
class Value;
} // namespace llvm

namespace ubtrace::jit {

// One map as the lifted code sees it: plain constants in the address space
// the code will run in.
struct MapConstants {
  uint64_t handle = 0;     // what ld_imm64 BPF_PSEUDO_MAP_FD loads
  uint64_t value_base = 0; // BPF_PSEUDO_MAP_VALUE base; 0 if none
};

// The constants of host bindings (the CLI's, or the interpreter's).
std::vector<MapConstants> map_constants(std::span<const vm::MapBinding> maps);

// How the lifted code calls out of itself. The lifter handles bpf_loop and
// bpf_for_each_map_elem; every other helper id comes here. A strategy may
// emit a call to an address or to a named symbol, or inline code (the GPU
// target turns its special-register helpers into intrinsics).
class HelperLowering {
public:
  virtual ~HelperLowering() = default;

  // Emits helper `id` called with BPF registers r1..r5 (i64 each) at the
  // builder's insertion point; returns r0 (i64).
  virtual Result<llvm::Value *>
  call_helper(llvm::IRBuilderBase &b, int32_t id,
              const std::array<llvm::Value *, 5> &args) = 0;

  // Emits a call of map `map`'s iteration function (vm::ForEachFn) with the
  // map handle, `callback` (a function of the vm::ForEachCallback
  // signature) and the callback's context; returns its result as i64.
  virtual Result<llvm::Value *> call_map_iterate(llvm::IRBuilderBase &b,
                                                 uint32_t map,
                                                 llvm::Value *map_handle,
                                                 llvm::Function *callback,
                                                 llvm::Value *cb_ctx) = 0;
};

struct LiftOptions {
  // Frames of 512 bytes for every function instead of the verifier's depth
  // (rounded up to 16). Costs stack, buys nothing unless the verifier's
  // depth were wrong; for tests.
  bool full_stack_frames = false;
};

// Adds `program`'s functions to `module` (whose context and data layout the
// caller chose). `maps` is indexed like the object's maps. Returns the entry
// function, named `entry_name` with external linkage; the other functions
// are internal, named after it. Fails with "PC n: ..." on what it cannot
// lift (a helper the strategy lacks, a map without a value address).
Result<llvm::Function *>
lift_program(llvm::Module &module, const vm::VerifiedProgram &program,
             std::span<const MapConstants> maps, HelperLowering &helpers,
             const std::string &entry_name, const LiftOptions &options = {});

} // namespace ubtrace::jit
