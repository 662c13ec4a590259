// The random program generator (tests/fuzz/vm_program_gen.h) is what the
// JIT's differential fuzzer runs: every program it makes must pass the
// verifier and run to completion in the interpreter, and together they must
// cover the instruction set.
#include "test_runtime.h"
#include "tests/fuzz/vm_program_gen.h"

#include <gtest/gtest.h>
#include <random>
#include <set>

namespace ubtrace::vm::test {
namespace {

std::string listing(const std::vector<Insn> &insns) {
  std::string out;
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    out += std::to_string(pc) + ": " +
           disassemble(insns.data(), insns.size(), pc) + "\n";
    if (is_ld_imm64(insns[pc]))
      ++pc;
  }
  return out;
}

std::vector<uint8_t> random_bytes(std::mt19937_64 &rng) {
  std::vector<uint8_t> bytes(64 + rng() % 1500);
  for (uint8_t &b : bytes)
    b = uint8_t(rng());
  return bytes;
}

TEST(ProgramGen, EveryProgramVerifiesAndRuns) {
  std::mt19937_64 rng(20240601);
  fuzz::GenOptions options;
  std::set<uint8_t> opcodes;
  size_t backward_jumps = 0, calls = 0, insns = 0;
  uint64_t max_processed = 0;
  const int kPrograms = 3000;
  for (int i = 0; i < kPrograms; ++i) {
    std::vector<uint8_t> bytes = random_bytes(rng);
    std::vector<Insn> prog = fuzz::generate_program(bytes, options);
    Program p{"gen", "gen", prog, {}};
    auto verified =
        verify(p, {}, standard_helpers(), ContextInfo{options.ctx_size});
    ASSERT_TRUE(verified) << "program " << i << ": " << verified.error() << "\n"
                          << listing(prog);
    max_processed = std::max(max_processed, verified->stats.processed_insns);
    auto bound = bind_program(*verified, {}, HelperImpls{});
    ASSERT_TRUE(bound) << bound.error();
    std::vector<uint8_t> ctx(options.ctx_size);
    for (uint8_t &b : ctx)
      b = uint8_t(rng());
    RunResult r = run(*bound, ctx.data());
    ASSERT_EQ(r.status, RunStatus::Ok) << "program " << i << "\n"
                                       << listing(prog);
    // The same input makes the same program and the same result.
    if (i % 100 == 0) {
      EXPECT_EQ(fuzz::generate_program(bytes, options).size(), prog.size());
      EXPECT_EQ(run(*bound, ctx.data()).r0, r.r0);
    }
    insns += prog.size();
    for (uint32_t pc = 0; pc < prog.size(); ++pc) {
      opcodes.insert(prog[pc].code);
      if (is_jump(prog[pc]) && jump_target(prog[pc], pc) <= pc)
        ++backward_jumps;
      if (is_pseudo_call(prog[pc]))
        ++calls;
      if (is_ld_imm64(prog[pc]))
        ++pc;
    }
  }
  // Coverage: every ALU op in both widths, JMP32, memory sizes, atomics.
  for (uint8_t op :
       {BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH, BPF_RSH,
        BPF_NEG, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH, BPF_END}) {
    EXPECT_TRUE(opcodes.count(BPF_ALU64 | op) ||
                opcodes.count(BPF_ALU64 | op | BPF_X))
        << "alu64 op " << int(op);
    EXPECT_TRUE(opcodes.count(BPF_ALU | op) ||
                opcodes.count(BPF_ALU | op | BPF_X))
        << "alu32 op " << int(op);
  }
  for (uint8_t code :
       {uint8_t(BPF_JMP32 | BPF_JSGT | BPF_X),
        uint8_t(BPF_JMP | BPF_JSET | BPF_K),
        uint8_t(BPF_STX | BPF_ATOMIC | BPF_W),
        uint8_t(BPF_STX | BPF_ATOMIC | BPF_DW),
        uint8_t(BPF_LDX | kModeMemSx | BPF_H),
        uint8_t(BPF_ST | BPF_MEM | BPF_B), uint8_t(BPF_JMP32 | BPF_JA),
        uint8_t(BPF_LD | BPF_IMM | BPF_DW)})
    EXPECT_TRUE(opcodes.count(code)) << "opcode " << int(code);
  EXPECT_GT(backward_jumps, size_t(kPrograms) / 2);
  EXPECT_GT(calls, size_t(kPrograms) / 4);
  EXPECT_GT(insns, size_t(kPrograms) * 40);
  EXPECT_LT(max_processed, 1000000u);
}

TEST(ProgramGen, EmptyAndTinyInputsStillMakePrograms) {
  for (size_t n : {0, 1, 2, 7}) {
    std::vector<uint8_t> bytes(n, 0xa5);
    std::vector<Insn> prog = fuzz::generate_program(bytes);
    Program p{"gen", "gen", prog, {}};
    auto verified = verify(p, {}, standard_helpers(), ContextInfo{64});
    ASSERT_TRUE(verified) << verified.error() << "\n" << listing(prog);
  }
}

} // namespace
} // namespace ubtrace::vm::test
