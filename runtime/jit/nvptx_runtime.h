// The device runtime (runtime/gpu/device_runtime.c), compiled to NVPTX
// bitcode at build time and embedded: linked into each probe module.
#pragma once

#include "runtime/result.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace ubtrace::jit::nvptx {

// Links every runtime function into `module` (external linkage and
// always-inline, so the optimiser inlines them with their constant sizes;
// internalize_runtime() lets the unused ones go afterwards).
Result<void> link_device_runtime(llvm::Module &module);

// Gives every function but `keep` internal linkage.
void internalize_except(llvm::Module &module,
                        const std::vector<std::string> &keep);

} // namespace ubtrace::jit::nvptx
