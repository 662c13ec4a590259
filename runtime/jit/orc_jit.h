// The in-process target (the CLI): lifted programs compiled with ORC LLJIT
// into functions of this process, called as `uint64_t entry(void *ctx)`.
// Helpers are called at their addresses in this process (AddressHelpers).
//
//   auto engine = jit::JitEngine::create();            // once per process
//   auto prog = (*engine)->compile(verified, bindings, helper_impls);
//   uint64_t r0 = (*prog)->entry()(&ctx);
//
// No LLVM type appears here: the CLI links ubtrace_jit without LLVM headers.
#pragma once

#include "runtime/jit/compile_times.h"
#include "runtime/jit/lifter.h"
#include "runtime/jit/optimize.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace ubtrace::jit {

using ProgramEntry = uint64_t (*)(void *ctx);

struct JitOptions {
  OptLevel level = OptLevel::O2; // IR pipeline and code generator
  LiftOptions lift;
  bool keep_ir = false; // keep the optimised IR text (JittedProgram::ir)
};

class JitEngine;

// A compiled program. Its code lives until the last reference goes.
class JittedProgram {
public:
  ~JittedProgram();
  JittedProgram(const JittedProgram &) = delete;
  JittedProgram &operator=(const JittedProgram &) = delete;

  ProgramEntry entry() const { return entry_; }
  uint64_t run(void *ctx) const { return entry_(ctx); }
  const CompileTimes &times() const { return times_; }
  const std::string &ir() const { return ir_; } // with JitOptions::keep_ir

private:
  friend class JitEngine;
  struct Code; // the ORC resources holding the machine code
  explicit JittedProgram(std::unique_ptr<Code> code);

  std::unique_ptr<Code> code_;
  ProgramEntry entry_ = nullptr;
  CompileTimes times_;
  std::string ir_;
};

class JitEngine {
public:
  static Result<std::unique_ptr<JitEngine>>
  create(const JitOptions &options = {});
  ~JitEngine();

  // The usual case: the program bound as bind_program() binds it for the
  // interpreter, with the same maps and helper implementations.
  Result<std::shared_ptr<JittedProgram>>
  compile(const vm::VerifiedProgram &program,
          std::span<const vm::MapBinding> maps, const vm::HelperImpls &helpers);

  // Any map constants and helper strategy (addresses of this process).
  Result<std::shared_ptr<JittedProgram>>
  compile(const vm::VerifiedProgram &program,
          std::span<const MapConstants> maps, HelperLowering &helpers);

  const JitOptions &options() const { return options_; }

private:
  friend class JittedProgram;
  struct State; // LLJIT and the target machine, shared with JittedPrograms
  explicit JitEngine(const JitOptions &options, std::shared_ptr<State> state);

  JitOptions options_;
  std::shared_ptr<State> state_;
};

} // namespace ubtrace::jit
