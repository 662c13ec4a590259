// The IR rewrites the NVPTX target runs around LLVM's pipeline. Internal to
// nvptx_compile.cpp; separate so each stays small and testable.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace ubtrace::jit::nvptx {

// Lifted BPF computes addresses as integers (r2 = r10; r2 += -8) and turns
// them back into pointers at each access. inttoptr(ptrtoint(P) + C) becomes
// a GEP of P, so the probe's stack frame and context are plain objects again
// that SROA can split into registers and whose alignment is known. Needs
// SSA (run after mem2reg). Returns true if anything changed.
bool fold_integer_pointers(llvm::Function &fn);

// `atomicrmw add` whose old value nobody reads (BPF `lock add`: count(),
// sum(), histogram buckets) becomes a call of the device runtime's
// aggregating add: warp-aggregated when every thread adds the same
// constant, a plain device atomic otherwise. The callees are inlined by the
// next optimisation. Only functions named in `probe_code` are rewritten
// (not the runtime's own atomics). Returns how many were rewritten.
unsigned aggregate_atomic_adds(llvm::Module &module,
                               const std::set<std::string> &probe_code,
                               bool warp_aggregate);

struct ContextUse {
  bool used = false;
  uint64_t arg_mask = 0; // kernel parameters read (bit i: arg i)
};

// How a probe wrapper (void(ptr ctx)) uses its context after optimisation:
// not at all, or which arguments it loads. Any use the analysis cannot
// follow counts as reading every argument.
ContextUse analyse_context(const llvm::Function &wrapper);

} // namespace ubtrace::jit::nvptx
