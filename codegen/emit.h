// LLVM module -> optimised BPF ELF object, through LLVM's BPF target.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <llvm/IR/Module.h>
#include <string>
#include <vector>

namespace ubtrace::codegen {

// An error LLVM's BPF backend reported instead of compiling (the 512-byte
// stack exceeded, an operation BPF cannot express), in `function`.
struct BackendError {
  std::string function;
  std::string message;
  bool stack_limit = false; // "Looks like the BPF stack limit is exceeded"
};

// IR instructions past which a function is optimised at O1, not O2 (see
// emit.cpp): about 1000 statements in one probe.
inline constexpr size_t kLargeFunction = 8192;
size_t largest_function(const llvm::Module &m);

// Optimises `m` (O2; O1 past kLargeFunction) and emits it as a BPF object
// (little endian, ISA v3 plus v4's long jumps: llvm_setup.h). When `ir` is
// given, it receives the optimised IR. When the backend reports errors, they go
// to `errors` and the result is an error.
Result<std::vector<uint8_t>>
emit_object(llvm::Module &m, std::string *ir,
            std::vector<BackendError> *errors = nullptr);

// The most instructions one program may have: the kernel's limit for a
// privileged program, and what ubtrace's verifier steps through in all.
inline constexpr size_t kMaxProgramInsns = 1'000'000;

// Instructions per code section ("uprobe/p0" -> n) of an object.
Result<std::vector<std::pair<std::string, size_t>>>
program_sizes(const std::vector<uint8_t> &object);

} // namespace ubtrace::codegen
