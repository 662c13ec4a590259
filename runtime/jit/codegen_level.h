// OptLevel (optimize.h) as LLVM's code generator takes it: the ORC JIT and
// remote images use the same mapping. Private to runtime/jit (LLVM headers).
#pragma once

#include "runtime/jit/optimize.h"

#include <cstddef>
#include <llvm/Support/CodeGen.h>

namespace ubtrace::jit {

inline llvm::CodeGenOptLevel codegen_level(OptLevel level) {
  switch (level) {
  case OptLevel::O0:
    return llvm::CodeGenOptLevel::None;
  case OptLevel::O1:
    return llvm::CodeGenOptLevel::Less;
  case OptLevel::O2:
    return llvm::CodeGenOptLevel::Default;
  case OptLevel::O3:
    return llvm::CodeGenOptLevel::Aggressive;
  }
  return llvm::CodeGenOptLevel::Default;
}

// BPF instructions past which a program is compiled by the linear
// pipeline: LLVM's optimising x86-64 code generator (greedy register
// allocation's local splitting, machine CSE) is quadratic in the size of a
// basic block, and a probe of 4000 statements is one block of 40000
// instructions (8000 took 8 s, 16000 over 30 s). Past this size: the IR at
// O1 and instruction selection and register allocation at -O0 (FastISel,
// the fast allocator), linear in size; the code is slower per hit.
inline constexpr size_t kLargeProgramInsns = 16384;

struct Pipeline {
  OptLevel ir;
  llvm::CodeGenOptLevel codegen;
};

// The pipeline for a compile whose largest program has `largest_insns`
// instructions, at the level asked for.
inline Pipeline pipeline_for(OptLevel level, size_t largest_insns) {
  if (largest_insns > kLargeProgramInsns && level != OptLevel::O0)
    return {OptLevel::O1, llvm::CodeGenOptLevel::None};
  return {level, codegen_level(level)};
}

} // namespace ubtrace::jit
