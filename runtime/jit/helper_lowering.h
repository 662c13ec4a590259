// The two ways x86-64 code calls helpers (lifter.h's HelperLowering):
//   AddressHelpers - in this process: each helper is a known address (the
//                    vm::HelperImpls the interpreter uses), called directly.
//   SymbolHelpers  - in another process: each helper is an external symbol,
//                    resolved when the image is linked (remote_image.h).
// Both call the uniform signature u64 fn(u64 r1, ..., u64 r5).
#pragma once

#include "runtime/jit/lifter.h"
#include "runtime/jit/remote_symbols.h"

#include <string>
#include <vector>

namespace ubtrace::jit {

class AddressHelpers final : public HelperLowering {
public:
  // Both must outlive the lifting.
  AddressHelpers(const vm::HelperImpls &impls,
                 std::span<const vm::MapBinding> maps)
      : impls_(impls), maps_(maps) {}

  Result<llvm::Value *>
  call_helper(llvm::IRBuilderBase &b, int32_t id,
              const std::array<llvm::Value *, 5> &args) override;
  Result<llvm::Value *> call_map_iterate(llvm::IRBuilderBase &b, uint32_t map,
                                         llvm::Value *map_handle,
                                         llvm::Function *callback,
                                         llvm::Value *cb_ctx) override;

private:
  const vm::HelperImpls &impls_;
  std::span<const vm::MapBinding> maps_;
};

class SymbolHelpers final : public HelperLowering {
public:
  struct Options {
    // Helper ids the target provides; a call of another fails the lift.
    // Empty: any id (a missing one fails the link instead).
    std::vector<int32_t> available;
    // Call through the GOT (`call *sym@GOTPCREL(%rip)`) instead of a PLT
    // call the linker routes through a stub when the helper is far away.
    bool call_through_got = false;
  };
  SymbolHelpers() = default;
  explicit SymbolHelpers(Options options) : options_(std::move(options)) {}

  Result<llvm::Value *>
  call_helper(llvm::IRBuilderBase &b, int32_t id,
              const std::array<llvm::Value *, 5> &args) override;
  Result<llvm::Value *> call_map_iterate(llvm::IRBuilderBase &b, uint32_t map,
                                         llvm::Value *map_handle,
                                         llvm::Function *callback,
                                         llvm::Value *cb_ctx) override;

private:
  llvm::Function *declare(llvm::IRBuilderBase &b, const std::string &name,
                          llvm::FunctionType *type);
  Options options_;
};

} // namespace ubtrace::jit
