#include "runtime/jit/optimize.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <mutex>

namespace ubtrace::jit {

void optimize_module(llvm::Module &module, llvm::TargetMachine *tm,
                     OptLevel level) {
  if (level == OptLevel::O0)
    return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel opt = llvm::OptimizationLevel::O2;
  switch (level) {
  case OptLevel::O0:
  case OptLevel::O1:
    opt = llvm::OptimizationLevel::O1;
    break;
  case OptLevel::O2:
    opt = llvm::OptimizationLevel::O2;
    break;
  case OptLevel::O3:
    opt = llvm::OptimizationLevel::O3;
    break;
  }
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(opt);
  mpm.run(module, mam);
}

void initialize_llvm_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
}

} // namespace ubtrace::jit
