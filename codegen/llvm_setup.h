// Process-wide LLVM settings for the BPF code generator, made once before
// the first compile (emit_object calls configure_llvm()):
//
//  - Pre-RA scheduling in source order. LLVM's default for BPF, the ILP
//    list scheduler, recomputes node heights after each node it schedules:
//    quadratic in the length of a basic block, and a probe of 4000 map
//    updates is one block (80% of its compile time went there; 16000 took
//    minutes). The source-order list scheduler is linear in practice and is
//    what LLVM already uses for x86-64 (the JIT) and NVPTX.
//  - No machine-level CSE. It clears kill flags over every use of the
//    register it keeps, once per instruction it removes: quadratic when
//    thousands of statements load the same constant (60% of a compile of
//    8000 map updates). The IR passes have done the CSE that matters (the
//    corpus compiles to 0.5% more BPF instructions without it). The option
//    is LLVM's, process-wide: the x86-64 JIT of the same process goes
//    without it as well.
//  - ISA v4's long jump (`gotol`, 32-bit offset) and none of v4's other
//    instructions: a branch past the 16-bit reach of `goto`/`if` becomes
//    `if cond goto +1; goto +1; gotol L` (LLVM's BPF backend does that for
//    v4), where v3 ended in the fatal "Branch target out of insn range".
//    Sign-extending loads and moves, bswap, signed division and
//    store-immediate stay off, so code is v3's everywhere else. The VM's
//    verifier, interpreter and JIT lifter all read `gotol`.
//  - Fatal errors: LLVM's report_fatal_error and out-of-memory reports end
//    ubtrace with "ERROR: ..." and exit status 1 (never an abort, a core,
//    or "LLVM ERROR"), naming what was being compiled (CompileScope).
#pragma once

#include <string>

namespace ubtrace::codegen {

void configure_llvm();

// While alive, LLVM's fatal errors name `what` ("compiling stdin").
class CompileScope {
public:
  explicit CompileScope(std::string what);
  ~CompileScope();
  CompileScope(const CompileScope &) = delete;
  CompileScope &operator=(const CompileScope &) = delete;

private:
  std::string previous_;
};

} // namespace ubtrace::codegen
