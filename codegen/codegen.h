// Code generation: the typed AST becomes LLVM IR, then a BPF ELF object
// through LLVM's BPF target (one program per probe, BTF-defined maps), plus
// the metadata a backend needs, all in a runtime::Bundle.
#pragma once

#include "ast/context.h"
#include "runtime/bundle.h"
#include "runtime/result.h"

#include <string>

namespace ubtrace::codegen {

struct Options {
  bool want_ir = false;     // keep the optimised IR text (-d ir)
  bool want_disasm = false; // keep a disassembly (-d bpf)
  uint32_t ncpus = 0;       // 0: this machine's
  // -k: report failed reads of the traced process and lookups of missing
  // map elements at run time (EventType::HelperError), where they happen.
  bool helper_errors = false;
};

struct Output {
  runtime::Bundle bundle;
  std::string ir;
  std::string disasm;
};

Result<Output> generate(ast::ASTContext &ctx, const Options &opts);

// Disassembles the programs of a BPF ELF object (as `-d bpf` prints them).
Result<std::string> disassemble(const std::vector<uint8_t> &object);

} // namespace ubtrace::codegen
