// LLVM module -> optimised BPF ELF object, through LLVM's BPF target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "runtime/result.h"

namespace ubtrace::codegen {

// Optimises `m` (O2) and emits it as a BPF (little endian, ISA v3) object.
// When `ir` is given, it receives the optimised IR.
Result<std::vector<uint8_t>> emit_object(llvm::Module &m, std::string *ir);

} // namespace ubtrace::codegen
