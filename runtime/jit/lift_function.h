// Internal to the lifter: the state of lifting one program (ProgramScope) and
// one of its functions (FunctionLifter). Each instruction class has one
// small unit of the same shape, `Result<void> lift_<class>(pc)`, in a file of
// its own: lift_alu.cpp, lift_jmp.cpp, lift_mem.cpp, lift_ld.cpp,
// lift_call.cpp.
#pragma once

#include "runtime/jit/lifter.h"

#include <llvm/IR/IRBuilder.h>
#include <map>
#include <vector>

namespace ubtrace::jit::detail {

// What every function of one program shares.
struct ProgramScope {
  llvm::Module &module;
  const vm::VerifiedProgram &program;
  std::span<const MapConstants> maps;
  HelperLowering &helpers;
  const LiftOptions &options;
  std::string entry_name;
  std::map<uint32_t, llvm::Function *> functions; // by entry pc
  std::map<uint32_t, llvm::Function *> adapters;  // for_each, by callback pc

  const vm::HelperCallSite *helper_site(uint32_t pc) const;
  // The for_each adapter of the callback at `entry`, made on first use.
  llvm::Function *for_each_adapter(uint32_t entry);
};

// "PC n: what".
Error error_at(uint32_t pc, const std::string &what);

class FunctionLifter {
public:
  FunctionLifter(ProgramScope &scope, const vm::SubprogInfo &info,
                 llvm::Function *fn);
  Result<void> lift();

private:
  // One unit per instruction class; each lifts the instruction at `pc`.
  Result<void> lift_alu64(uint32_t pc);
  Result<void> lift_alu32(uint32_t pc);
  Result<void> lift_ldx(uint32_t pc);
  Result<void> lift_st(uint32_t pc);
  Result<void> lift_stx(uint32_t pc);
  Result<void> lift_ld(uint32_t pc);
  Result<void> lift_jmp(uint32_t pc); // JMP and JMP32, calls and exit aside
  Result<void> lift_call(uint32_t pc);
  Result<void> lift_exit(uint32_t pc);

  // Pieces the units share.
  Result<void> lift_atomic(uint32_t pc);
  Result<void> lift_pseudo_call(uint32_t pc);
  Result<void> lift_bpf_loop(uint32_t pc, const vm::HelperCallSite &site);
  Result<void> lift_for_each(uint32_t pc, const vm::HelperCallSite &site);
  llvm::Value *alu_result(uint8_t op, int16_t off, llvm::Value *dst,
                          llvm::Value *src, unsigned bits);
  llvm::Value *condition(uint8_t op, llvm::Value *a, llvm::Value *b);
  llvm::Value *address(uint8_t base_reg, int16_t off);

  llvm::Value *reg(uint8_t r);
  void set_reg(uint8_t r, llvm::Value *v);
  llvm::Value *imm64(int32_t imm); // sign-extended, as ALU64/JMP use it
  llvm::Value *imm32(int32_t imm);
  llvm::BasicBlock *block_at(uint32_t pc);
  llvm::Function *function_at(uint32_t entry);

  void find_leaders();
  void emit_prologue();

  ProgramScope &scope_;
  const vm::SubprogInfo &info_;
  llvm::Function *fn_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  llvm::Type *i64_;
  std::vector<llvm::AllocaInst *> regs_;          // r0..r10
  std::map<uint32_t, llvm::BasicBlock *> blocks_; // leaders
};

} // namespace ubtrace::jit::detail
