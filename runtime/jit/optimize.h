// The IR optimisation every target runs after lifting: LLVM's standard
// per-module pipeline (mem2reg turns the register allocas into SSA values,
// the rest folds BPF's explicit masking and zero-extension away), tuned by
// the target's cost model when a TargetMachine is given.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace ubtrace::jit {

enum class OptLevel { O0, O1, O2, O3 };

void optimize_module(llvm::Module &module, llvm::TargetMachine *tm,
                     OptLevel level);

// Registers the LLVM targets the JIT emits code for (the host's, and
// x86-64 for remote images). Idempotent and thread-safe.
void initialize_llvm_targets();

} // namespace ubtrace::jit
