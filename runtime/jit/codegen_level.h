// OptLevel (optimize.h) as LLVM's code generator takes it: the ORC JIT and
// remote images use the same mapping. Private to runtime/jit (LLVM headers).
#pragma once

#include <llvm/Support/CodeGen.h>

#include "runtime/jit/optimize.h"

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

} // namespace ubtrace::jit
