#include "runtime/jit/orc_jit.h"

#include "runtime/jit/codegen_level.h"
#include "runtime/jit/helper_lowering.h"

#include <atomic>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

namespace ubtrace::jit {
namespace {

std::string to_string(llvm::Error error) {
  return llvm::toString(std::move(error));
}

} // namespace

struct JitEngine::State {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  // For the IR pipeline's cost model and the data layout.
  std::unique_ptr<llvm::TargetMachine> tm;
  // One compile at a time past lifting: LLJIT's default compiler shares one
  // TargetMachine, which is not safe to use from two threads at once.
  std::mutex compile_lock;
  std::atomic<uint64_t> next_id{0};
};

struct JittedProgram::Code {
  std::shared_ptr<JitEngine::State> state; // outlives the tracker
  llvm::orc::ResourceTrackerSP tracker;
};

JittedProgram::JittedProgram(std::unique_ptr<Code> code)
    : code_(std::move(code)) {}

JittedProgram::~JittedProgram() {
  if (code_ && code_->tracker)
    llvm::consumeError(code_->tracker->remove());
}

JitEngine::JitEngine(const JitOptions &options, std::shared_ptr<State> state)
    : options_(options), state_(std::move(state)) {}

JitEngine::~JitEngine() = default;

Result<std::unique_ptr<JitEngine>>
JitEngine::create(const JitOptions &options) {
  initialize_llvm_targets();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return make_error("cannot describe the host for the JIT: " +
                      to_string(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(codegen_level(options.level));
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return make_error("cannot create the host target machine: " +
                      to_string(tm.takeError()));
  auto jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!jit)
    return make_error("cannot create the ORC JIT: " +
                      to_string(jit.takeError()));
  auto state = std::make_shared<State>();
  state->jit = std::move(*jit);
  state->tm = std::move(*tm);
  return std::unique_ptr<JitEngine>(new JitEngine(options, std::move(state)));
}

Result<std::shared_ptr<JittedProgram>>
JitEngine::compile(const vm::VerifiedProgram &program,
                   std::span<const vm::MapBinding> maps,
                   const vm::HelperImpls &helpers) {
  AddressHelpers lowering(helpers, maps);
  std::vector<MapConstants> constants = map_constants(maps);
  return compile(program, constants, lowering);
}

Result<std::shared_ptr<JittedProgram>>
JitEngine::compile(const vm::VerifiedProgram &program,
                   std::span<const MapConstants> maps,
                   HelperLowering &helpers) {
  CompileTimes times;
  uint64_t t0 = steady_now_ns();
  auto context = std::make_unique<llvm::LLVMContext>();
  std::string name = "ubt_jit_" + std::to_string(state_->next_id++);
  auto module = std::make_unique<llvm::Module>(name, *context);
  module->setDataLayout(state_->tm->createDataLayout());
  module->setTargetTriple(state_->tm->getTargetTriple().str());
  auto entry =
      lift_program(*module, program, maps, helpers, name, options_.lift);
  if (!entry)
    return make_error(program.name + ": " + entry.error());
  std::string broken;
  llvm::raw_string_ostream broken_out(broken);
  if (llvm::verifyModule(*module, &broken_out))
    return make_error("BUG: lifted IR of " + program.name +
                      " is invalid: " + broken);
  uint64_t t1 = steady_now_ns();
  times.lift_ns = t1 - t0;
  std::lock_guard<std::mutex> lock(state_->compile_lock);
  optimize_module(*module, state_->tm.get(), options_.level);
  uint64_t t2 = steady_now_ns();
  times.optimize_ns = t2 - t1;
  std::string ir;
  if (options_.keep_ir) {
    llvm::raw_string_ostream out(ir);
    module->print(out, nullptr);
  }

  auto code = std::make_unique<JittedProgram::Code>();
  code->state = state_;
  llvm::orc::LLJIT &jit = *state_->jit;
  code->tracker = jit.getMainJITDylib().createResourceTracker();
  if (auto err = jit.addIRModule(
          code->tracker,
          llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    return make_error("cannot add " + program.name +
                      " to the JIT: " + to_string(std::move(err)));
  auto address = jit.lookup(name);
  if (!address)
    return make_error("cannot compile " + program.name + ": " +
                      to_string(address.takeError()));
  times.codegen_ns = steady_now_ns() - t2;

  std::shared_ptr<JittedProgram> out(new JittedProgram(std::move(code)));
  out->entry_ = address->toPtr<ProgramEntry>();
  out->times_ = times;
  out->ir_ = std::move(ir);
  return out;
}

} // namespace ubtrace::jit
