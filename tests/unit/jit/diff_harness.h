// Running one verified program in both engines, the interpreter and the
// JIT, for differential tests: the same ctx bytes in, r0 and the ctx bytes
// out (maps and events are the caller's to compare: each engine gets its
// own bindings).
#pragma once

#include "runtime/jit/orc_jit.h"
#include "runtime/result.h"
#include "runtime/vm/interpreter.h"
#include "runtime/vm/verifier.h"

#include <span>
#include <string>
#include <vector>

namespace ubtrace::jit::test {

// One engine for the whole test process (setting ORC up costs ~ms).
JitEngine &engine();

struct Outcome {
  uint64_t r0 = 0;
  std::vector<uint8_t> ctx; // after the run

  bool operator==(const Outcome &) const = default;
};

Result<Outcome> interpret(const vm::VerifiedProgram &program,
                          std::span<const vm::MapBinding> maps,
                          const vm::HelperImpls &helpers,
                          std::vector<uint8_t> ctx);
Result<Outcome> jit_run(const vm::VerifiedProgram &program,
                        std::span<const vm::MapBinding> maps,
                        const vm::HelperImpls &helpers,
                        std::vector<uint8_t> ctx);

// A program without maps: verified against a ctx of ctxs[0].size() bytes,
// compiled once and run in both engines on each ctx. Empty when both agree
// everywhere, else what differs first (or why it could not run), with the
// program's disassembly.
std::string diff_plain(std::span<const vm::Insn> insns,
                       const std::vector<std::vector<uint8_t>> &ctxs,
                       bool ctx_writable, const vm::HelperTable &protos = {},
                       const vm::HelperImpls &helpers = {});

// Fills the next 64 KiB of this thread's stack with one byte value. Some
// programs copy stack bytes that a helper left unwritten (probe_read_str
// writes up to the NUL, the verifier counts the whole buffer as written):
// called right before each engine runs, both then copy the same bytes
// instead of whatever earlier calls left behind.
void scrub_stack();

std::string listing(std::span<const vm::Insn> insns);
std::string hex_u64(uint64_t v);
std::string hex_bytes(std::span<const uint8_t> bytes);

} // namespace ubtrace::jit::test
