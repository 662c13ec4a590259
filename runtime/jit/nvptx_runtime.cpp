#include "runtime/jit/nvptx_runtime.h"

#include <algorithm>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

// kUbtDeviceRuntime / kUbtDeviceRuntimeSize: the bitcode (build-generated).
#include "nvptx_device_runtime.inc"

namespace ubtrace::jit::nvptx {

Result<void> link_device_runtime(llvm::Module &module) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(kUbtDeviceRuntime),
                        kUbtDeviceRuntimeSize);
  auto buffer =
      llvm::MemoryBuffer::getMemBuffer(bytes, "device_runtime.bc", false);
  auto runtime =
      llvm::parseBitcodeFile(buffer->getMemBufferRef(), module.getContext());
  if (!runtime)
    return make_error("the embedded device runtime does not load: " +
                      llvm::toString(runtime.takeError()));
  llvm::Module &rt = **runtime;
  rt.setDataLayout(module.getDataLayout());
  rt.setTargetTriple(module.getTargetTriple());
  for (llvm::Function &fn : rt) {
    // The module's CPU and PTX version decide, not clang's defaults.
    fn.removeFnAttr("target-cpu");
    fn.removeFnAttr("target-features");
    if (!fn.isDeclaration() && fn.hasExternalLinkage()) {
      fn.removeFnAttr(llvm::Attribute::NoInline);
      fn.removeFnAttr(llvm::Attribute::OptimizeNone);
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  if (llvm::Linker::linkModules(module, std::move(*runtime)))
    return make_error("cannot link the device runtime into the probes");
  return {};
}

void internalize_except(llvm::Module &module,
                        const std::vector<std::string> &keep) {
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    if (std::find(keep.begin(), keep.end(), fn.getName().str()) != keep.end())
      continue;
    fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

} // namespace ubtrace::jit::nvptx
