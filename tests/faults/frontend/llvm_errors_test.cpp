// LLVM's failures never reach the user raw (issue 11, defect 14): a fatal
// error ends ubtrace with "ERROR: ..." and exit status 1, never an abort or
// "LLVM ERROR"; an error the BPF backend reports (the stack limit, an
// operation BPF cannot do) comes back to the code generator, which locates
// it, instead of LLVM printing it and exiting.
#include "codegen/emit.h"
#include "codegen/llvm_setup.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/ErrorHandling.h>

namespace ubtrace::codegen {
namespace {

TEST(LlvmErrors, FatalErrorIsAnErrorAndExitOne) {
  EXPECT_EXIT(
      {
        configure_llvm();
        CompileScope scope("compiling big.bt");
        llvm::report_fatal_error("Branch target out of insn range");
      },
      ::testing::ExitedWithCode(1),
      "^ERROR: compiling big.bt: the LLVM code generator failed: Branch target "
      "out of insn range\n$");
}

TEST(LlvmErrors, FatalErrorWithCrashDiagnosticsDoesNotAbort) {
  EXPECT_EXIT(
      {
        configure_llvm();
        llvm::report_fatal_error("Cannot select", /*gen_crash_diag=*/true);
      },
      ::testing::ExitedWithCode(1), "^ERROR: the LLVM code generator failed: Cannot select");
}

// A module with one program `name` whose body `fill` builds.
template <class Fill>
std::unique_ptr<llvm::Module> module_with(llvm::LLVMContext &c, const char *name, Fill fill) {
  auto m = std::make_unique<llvm::Module>("test", c);
  m->setTargetTriple("bpfel");
  auto *i64 = llvm::Type::getInt64Ty(c);
  auto *ptr = llvm::PointerType::get(c, 0);
  auto *f = llvm::Function::Create(llvm::FunctionType::get(i64, {ptr}, false),
                                   llvm::Function::ExternalLinkage, name, *m);
  f->setSection("uprobe/test");
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  fill(b, *m, f);
  return m;
}

TEST(LlvmErrors, StackLimitComesBackByFunction) {
  llvm::LLVMContext c;
  auto m = module_with(c, "p0", [](llvm::IRBuilder<> &b, llvm::Module &, llvm::Function *f) {
    // 1 KiB of stack handed to a helper (probe_read_user), so it stays whole.
    auto *buf = b.CreateAlloca(llvm::ArrayType::get(b.getInt8Ty(), 1024));
    auto *ptr = llvm::PointerType::get(b.getContext(), 0);
    auto *helper = b.CreateIntToPtr(b.getInt64(112), ptr);
    auto *ty = llvm::FunctionType::get(b.getInt64Ty(), {ptr, b.getInt64Ty(), ptr}, false);
    b.CreateRet(b.CreateCall(ty, helper, {buf, b.getInt64(1024), f->getArg(0)}));
  });
  std::vector<BackendError> errors;
  auto obj = emit_object(*m, nullptr, &errors);
  ASSERT_FALSE(obj);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].function, "p0");
  EXPECT_TRUE(errors[0].stack_limit) << errors[0].message;
}

TEST(LlvmErrors, UnsupportedCallComesBackByFunction) {
  llvm::LLVMContext c;
  auto m = module_with(c, "p1", [](llvm::IRBuilder<> &b, llvm::Module &m, llvm::Function *) {
    // BPF passes five arguments in registers and no more.
    auto *i64 = b.getInt64Ty();
    auto *callee = llvm::Function::Create(
        llvm::FunctionType::get(i64, {i64, i64, i64, i64, i64, i64}, false),
        llvm::Function::ExternalLinkage, "six", m);
    auto *v = b.CreateCall(callee, {b.getInt64(1), b.getInt64(2), b.getInt64(3), b.getInt64(4),
                                    b.getInt64(5), b.getInt64(6)});
    b.CreateRet(v);
  });
  std::vector<BackendError> errors;
  auto obj = emit_object(*m, nullptr, &errors);
  ASSERT_FALSE(obj);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].function, "p1");
  EXPECT_FALSE(errors[0].stack_limit);
  EXPECT_FALSE(errors[0].message.empty());
}

} // namespace
} // namespace ubtrace::codegen
