// Random programs in both engines. The VM's generator makes pure
// computation (every ALU op, memory size, atomics, branches, loops, a
// call); the JIT's composes those with map helpers, bpf_loop, for_each and
// a logging helper. Seeds are fixed: a failure names its program.
#include "tests/fuzz/jit_program_gen.h"
#include "tests/fuzz/vm_program_gen.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/gen_diff.h"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <random>
#include <set>

namespace ubtrace::jit::test {
namespace {

// UBT_JIT_GEN_SCALE=N runs N times as many programs (a soak; the default
// keeps the test at seconds).
int scaled(int programs) {
  const char *scale = std::getenv("UBT_JIT_GEN_SCALE");
  return scale ? programs * std::max(1, std::atoi(scale)) : programs;
}

std::vector<uint8_t> random_bytes(std::mt19937_64 &rng, size_t min,
                                  size_t spread) {
  std::vector<uint8_t> bytes(min + rng() % spread);
  for (uint8_t &b : bytes)
    b = uint8_t(rng());
  return bytes;
}

TEST(GenDiff, ComputationProgramsAgreeOnEveryCtx) {
  std::mt19937_64 rng(20250101);
  vm::fuzz::GenOptions options;
  for (int i = 0; i < scaled(400); ++i) {
    options.isa_v4 = i % 4 != 0;
    std::vector<uint8_t> bytes = random_bytes(rng, 64, 1500);
    std::vector<vm::Insn> prog = vm::fuzz::generate_program(bytes, options);
    std::vector<std::vector<uint8_t>> ctxs(4);
    for (auto &ctx : ctxs) {
      ctx.resize(options.ctx_size);
      for (uint8_t &b : ctx)
        b = uint8_t(rng() >> (rng() % 8 * 8));
    }
    std::string diff = diff_plain(prog, ctxs, false);
    ASSERT_EQ(diff, "") << "program " << i;
  }
}

TEST(GenDiff, ProgramsWithHelpersMapsAndCallbacksAgree) {
  std::mt19937_64 rng(20250102);
  fuzz::JitGenOptions options;
  GenDiffStats stats;
  for (int i = 0; i < scaled(250); ++i) {
    std::vector<uint8_t> bytes = random_bytes(rng, 32, 600);
    std::vector<vm::Insn> prog = fuzz::generate_jit_program(bytes, options);
    std::vector<uint8_t> ctx(options.ctx_size);
    for (uint8_t &b : ctx)
      b = uint8_t(rng());
    std::string diff = diff_generated(prog, ctx, &stats);
    ASSERT_EQ(diff, "") << "program " << i;
  }
  // The generator must actually reach the helpers.
  EXPECT_EQ(stats.programs, uint64_t(scaled(250)));
  EXPECT_GT(stats.helper_calls, 50u);
}

// What the composed programs contain, so a generator change that stops
// emitting a feature shows here rather than as silently weaker tests.
TEST(GenDiff, ComposedProgramsCoverHelpersAndCallbacks) {
  std::mt19937_64 rng(20250103);
  std::set<int32_t> helpers;
  size_t callback_refs = 0, calls = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> bytes = random_bytes(rng, 32, 600);
    std::vector<vm::Insn> prog = fuzz::generate_jit_program(bytes);
    for (size_t pc = 0; pc < prog.size(); ++pc) {
      if (vm::is_helper_call(prog[pc]))
        helpers.insert(prog[pc].imm);
      if (vm::is_pseudo_call(prog[pc]))
        ++calls;
      if (vm::is_ld_imm64(prog[pc])) {
        callback_refs += prog[pc].src == BPF_PSEUDO_FUNC;
        ++pc;
      }
    }
  }
  for (int32_t id :
       {int32_t(BPF_FUNC_map_lookup_elem), int32_t(BPF_FUNC_map_update_elem),
        int32_t(BPF_FUNC_map_delete_elem), int32_t(BPF_FUNC_loop),
        int32_t(BPF_FUNC_for_each_map_elem), fuzz::kRecordHelper})
    EXPECT_TRUE(helpers.count(id)) << "helper " << id;
  EXPECT_GT(callback_refs, 50u);
  EXPECT_GT(calls, 50u);
}

} // namespace
} // namespace ubtrace::jit::test
