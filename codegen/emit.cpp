#include "codegen/emit.h"

#include "codegen/codegen.h"
#include "codegen/llvm_setup.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <mutex>
#include <sstream>

extern "C" {
void LLVMInitializeBPFTargetInfo();
void LLVMInitializeBPFTarget();
void LLVMInitializeBPFTargetMC();
void LLVMInitializeBPFAsmPrinter();
void LLVMInitializeBPFDisassembler();
}

namespace ubtrace::codegen {

namespace {

const char *kTriple = "bpfel";
// v4 for its long jumps only: configure_llvm() turns its other
// instructions off (llvm_setup.h).
const char *kCpu = "v4";

const llvm::Target *bpf_target(std::string &err) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeBPFTargetInfo();
    LLVMInitializeBPFTarget();
    LLVMInitializeBPFTargetMC();
    LLVMInitializeBPFAsmPrinter();
    LLVMInitializeBPFDisassembler();
  });
  return llvm::TargetRegistry::lookupTarget(kTriple, err);
}

// Errors LLVM reports through the context (not fatal ones): collected
// instead of LLVM's default of printing them and calling exit(1).
void collect_diagnostic(const llvm::DiagnosticInfo *di, void *context) {
  const llvm::DiagnosticInfo &info = *di;
  if (info.getSeverity() != llvm::DS_Error)
    return;
  auto &errors = *static_cast<std::vector<BackendError> *>(context);
  BackendError e;
  if (auto *u = llvm::dyn_cast<llvm::DiagnosticInfoUnsupported>(&info)) {
    e.function = u->getFunction().getName().str();
    e.message = u->getMessage().str();
  } else {
    llvm::raw_string_ostream os(e.message);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
  }
  e.stack_limit = e.message.find("BPF stack limit") != std::string::npos;
  errors.push_back(std::move(e));
}

} // namespace

size_t largest_function(const llvm::Module &m) {
  size_t most = 0;
  for (const llvm::Function &f : m)
    most = std::max<size_t>(most, f.getInstructionCount());
  return most;
}

// O2, but O1 for modules with a huge function: O2's value propagation
// (jump threading, correlated value propagation: LazyValueInfo) is
// quadratic in the number of blocks that test the same value, and 3000
// `if (arg0 == 7)` tests took seconds; O1 has neither and is linear.
llvm::OptimizationLevel ir_level(const llvm::Module &m) {
  return largest_function(m) > kLargeFunction ? llvm::OptimizationLevel::O1
                                              : llvm::OptimizationLevel::O2;
}

Result<std::vector<uint8_t>> emit_object(llvm::Module &m, std::string *ir,
                                         std::vector<BackendError> *errors) {
  configure_llvm();
  std::string err;
  const llvm::Target *target = bpf_target(err);
  if (!target)
    return make_error("LLVM has no BPF target: " + err);
  std::vector<BackendError> reported;
  auto &llctx = m.getContext();
  auto saved_handler = llctx.getDiagnosticHandlerCallBack();
  void *saved_context = llctx.getDiagnosticContext();
  llctx.setDiagnosticHandlerCallBack(collect_diagnostic, &reported);
  struct Restore {
    llvm::LLVMContext &c;
    llvm::DiagnosticHandler::DiagnosticHandlerTy h;
    void *ctx;
    ~Restore() { c.setDiagnosticHandlerCallBack(h, ctx); }
  } restore{llctx, saved_handler, saved_context};

  llvm::TargetOptions topts;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, kCpu, "", topts, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  m.setDataLayout(tm->createDataLayout());

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    auto mpm = pb.buildPerModuleDefaultPipeline(ir_level(m));
    mpm.run(m, mam);
  }
  if (ir) {
    llvm::raw_string_ostream os(*ir);
    m.print(os, nullptr);
  }
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile))
    return make_error("LLVM cannot emit BPF objects");
  pm.run(m);
  if (!reported.empty()) {
    std::string first = reported.front().message;
    if (errors)
      *errors = std::move(reported);
    return make_error("the BPF code generator failed: " + first);
  }
  return std::vector<uint8_t>(buf.begin(), buf.end());
}

Result<std::vector<std::pair<std::string, size_t>>>
program_sizes(const std::vector<uint8_t> &object) {
  llvm::StringRef data(reinterpret_cast<const char *>(object.data()),
                       object.size());
  auto obj = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(data, "bpf.o"));
  if (!obj)
    return make_error("not an ELF object: " + llvm::toString(obj.takeError()));
  std::vector<std::pair<std::string, size_t>> out;
  for (const auto &section : (*obj)->sections()) {
    auto name = section.getName();
    if (section.isText() && name && section.getSize() > 0)
      out.emplace_back(name->str(), section.getSize() / 8);
  }
  return out;
}

Result<std::string> disassemble(const std::vector<uint8_t> &object) {
  std::string err;
  const llvm::Target *target = bpf_target(err);
  if (!target)
    return make_error("LLVM has no BPF target: " + err);
  llvm::StringRef data(reinterpret_cast<const char *>(object.data()),
                       object.size());
  auto obj = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(data, "bpf.o"));
  if (!obj)
    return make_error("not an ELF object: " + llvm::toString(obj.takeError()));

  llvm::Triple triple(kTriple);
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(kTriple));
  llvm::MCTargetOptions mcopts;
  std::unique_ptr<llvm::MCAsmInfo> mai(
      target->createMCAsmInfo(*mri, kTriple, mcopts));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(kTriple, kCpu, ""));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  llvm::MCContext mc(triple, mai.get(), mri.get(), sti.get());
  std::unique_ptr<llvm::MCDisassembler> dis(
      target->createMCDisassembler(*sti, mc));
  std::unique_ptr<llvm::MCInstPrinter> printer(
      target->createMCInstPrinter(triple, 0, *mai, *mii, *mri));
  if (!dis || !printer)
    return make_error("LLVM has no BPF disassembler");

  std::string out;
  llvm::raw_string_ostream os(out);
  for (const auto &section : (*obj)->sections()) {
    if (!section.isText())
      continue;
    auto name = section.getName();
    auto contents = section.getContents();
    if (!name || !contents || contents->empty())
      continue;
    os << *name << ":\n";
    llvm::ArrayRef<uint8_t> bytes(
        reinterpret_cast<const uint8_t *>(contents->data()), contents->size());
    uint64_t addr = 0;
    while (addr < bytes.size()) {
      llvm::MCInst inst;
      uint64_t size = 0;
      auto status = dis->getInstruction(inst, size, bytes.slice(addr), addr,
                                        llvm::nulls());
      if (status != llvm::MCDisassembler::Success || size == 0) {
        os << llvm::format("%5llu: <unknown>\n", addr / 8);
        size = 8;
      } else {
        std::string text;
        llvm::raw_string_ostream ts(text);
        printer->printInst(&inst, addr, "", *sti, ts);
        os << llvm::format("%5llu:", addr / 8) << ts.str() << "\n";
      }
      addr += size;
    }
    os << "\n";
  }
  return os.str();
}

} // namespace ubtrace::codegen
