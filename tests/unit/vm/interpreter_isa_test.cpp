// Run-time semantics of the instruction set that C code compiled by clang
// does not pin down (division by zero, shift amounts, 32-bit results,
// atomics, frames), on hand-assembled programs that pass the verifier.
#include "test_runtime.h"
#include "verifier_test_util.h"

#include <gtest/gtest.h>

namespace ubtrace::vm::test {
namespace {

RunResult run_insns(std::vector<Insn> insns, void *ctx = nullptr,
                    RunOptions options = {}) {
  auto verified = verify_insns(std::move(insns), {}, ContextInfo{64});
  if (!verified) {
    ADD_FAILURE() << verified.error();
    return {};
  }
  auto bound = bind_program(*verified, {}, test_helpers());
  if (!bound) {
    ADD_FAILURE() << bound.error();
    return {};
  }
  return run(*bound, ctx, options);
}

uint64_t result(std::vector<Insn> insns, void *ctx = nullptr) {
  RunResult r = run_insns(std::move(insns), ctx);
  EXPECT_EQ(r.status, RunStatus::Ok) << describe(r.status);
  return r.r0;
}

// r0 = A; r1 = B; r0 op= r1 (class CLS, off OFF); exit
std::vector<Insn> binop(uint8_t cls, uint8_t op, int64_t a, int64_t b,
                        int16_t off = 0) {
  return {VM_LD_IMM64(0, a), VM_LD_IMM64(1, b),
          VM_INSN(cls | op | BPF_X, 0, 1, off, 0), VM_EXIT()};
}

TEST(InterpreterIsa, DivisionAndModuloByZero) {
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_DIV, 7, 0)), 0u);
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_MOD, 7, 0)), 7u);
  EXPECT_EQ(result(binop(BPF_ALU, BPF_DIV, -1, 0)), 0u);
  // 32-bit modulo by zero keeps the low half, zero-extended.
  EXPECT_EQ(result(binop(BPF_ALU, BPF_MOD, 0x1234567890, 0)), 0x34567890u);
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_DIV, 7, 0, kOffSigned)), 0u);
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_MOD, -7, 0, kOffSigned)), uint64_t(-7));
}

TEST(InterpreterIsa, SignedDivisionEdges) {
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_DIV, -7, 2, kOffSigned)), uint64_t(-3));
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_MOD, -7, 2, kOffSigned)), uint64_t(-1));
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_DIV, INT64_MIN, -1, kOffSigned)),
            uint64_t(INT64_MIN));
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_MOD, INT64_MIN, -1, kOffSigned)), 0u);
  EXPECT_EQ(result(binop(BPF_ALU, BPF_DIV, INT32_MIN, -1, kOffSigned)),
            0x80000000u);
  EXPECT_EQ(result(binop(BPF_ALU, BPF_DIV, -9, 2, kOffSigned)), 0xfffffffcu);
}

TEST(InterpreterIsa, ShiftAmountsWrapAtTheWidth) {
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_LSH, 1, 65)), 2u);
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_RSH, 4, 66)), 1u);
  EXPECT_EQ(result(binop(BPF_ALU64, BPF_ARSH, -8, 65)), uint64_t(-4));
  EXPECT_EQ(result(binop(BPF_ALU, BPF_LSH, 1, 33)), 2u);
  EXPECT_EQ(result(binop(BPF_ALU, BPF_ARSH, 0x80000000, 31)), 0xffffffffu);
}

TEST(InterpreterIsa, ThirtyTwoBitResultsAreZeroExtended) {
  EXPECT_EQ(result(binop(BPF_ALU, BPF_ADD, -1, 0)), 0xffffffffu);
  EXPECT_EQ(result(binop(BPF_ALU, BPF_SUB, 0, 1)), 0xffffffffu);
  EXPECT_EQ(result({VM_LD_IMM64(0, -1), VM_MOV32_REG(0, 0), VM_EXIT()}),
            0xffffffffu);
  EXPECT_EQ(result({VM_MOV64_IMM(0, -1), VM_EXIT()}), ~0ull);
  EXPECT_EQ(result({VM_MOV32_IMM(0, -1), VM_EXIT()}), 0xffffffffu);
  EXPECT_EQ(result({VM_LD_IMM64(0, -5), VM_NEG32(0), VM_EXIT()}), 5u);
  EXPECT_EQ(result({VM_LD_IMM64(0, 5), VM_NEG64(0), VM_EXIT()}), uint64_t(-5));
}

TEST(InterpreterIsa, SignExtensionAndByteSwaps) {
  EXPECT_EQ(result({VM_MOV64_IMM(1, 0x80), VM_MOVSX64_REG(0, 1, 8), VM_EXIT()}),
            uint64_t(-128));
  EXPECT_EQ(result({VM_LD_IMM64(1, 0x1ffff8000), VM_MOVSX64_REG(0, 1, 16),
                    VM_EXIT()}),
            uint64_t(-32768));
  EXPECT_EQ(
      result({VM_LD_IMM64(1, 0x80000000), VM_MOVSX64_REG(0, 1, 32), VM_EXIT()}),
      uint64_t(int64_t(INT32_MIN)));
  EXPECT_EQ(
      result({VM_MOV64_IMM(1, 0xff80), VM_MOVSX32_REG(0, 1, 16), VM_EXIT()}),
      0xffffff80u);
  EXPECT_EQ(result({VM_LD_IMM64(0, 0x1122334455667788),
                    VM_ENDIAN(BPF_TO_LE, 0, 16), VM_EXIT()}),
            0x7788u);
  EXPECT_EQ(result({VM_LD_IMM64(0, 0x1122334455667788),
                    VM_ENDIAN(BPF_TO_BE, 0, 32), VM_EXIT()}),
            0x88776655u);
  EXPECT_EQ(
      result({VM_LD_IMM64(0, 0x1122334455667788), VM_BSWAP(0, 64), VM_EXIT()}),
      0x8877665544332211u);
  EXPECT_EQ(result({VM_LD_IMM64(0, 0x1122334455667788),
                    VM_ENDIAN(BPF_TO_LE, 0, 64), VM_EXIT()}),
            0x1122334455667788u);
}

TEST(InterpreterIsa, LoadsAndStoresOfEverySize) {
  // *(u64 *)(fp-8) = 0x8899aabbccddeeff, then read it back piecewise.
  std::vector<Insn> prog = {VM_LD_IMM64(1, 0x8899aabbccddeeff),
                            VM_STX_MEM(BPF_DW, 10, 1, -8),
                            VM_LDX_MEM(BPF_B, 2, 10, -8),
                            VM_LDX_MEM(BPF_H, 3, 10, -6),
                            VM_LDX_MEM(BPF_W, 4, 10, -4),
                            VM_LDX_MEMSX(BPF_B, 5, 10, -1),
                            VM_MOV64_REG(0, 2),
                            VM_ALU64_REG(BPF_XOR, 0, 3),
                            VM_ALU64_REG(BPF_XOR, 0, 4),
                            VM_ALU64_REG(BPF_XOR, 0, 5),
                            VM_EXIT()};
  uint64_t want =
      0xffull ^ 0xccddull ^ 0x8899aabbull ^ uint64_t(int64_t(int8_t(0x88)));
  EXPECT_EQ(result(prog), want);
  // ST stores a sign-extended immediate.
  EXPECT_EQ(result({VM_ST_MEM(BPF_DW, 10, -8, -2),
                    VM_LDX_MEM(BPF_DW, 0, 10, -8), VM_EXIT()}),
            uint64_t(-2));
  EXPECT_EQ(result({VM_ST_MEM(BPF_DW, 10, -8, 0), VM_ST_MEM(BPF_H, 10, -8, -2),
                    VM_LDX_MEM(BPF_DW, 0, 10, -8), VM_EXIT()}),
            0xfffeu);
}

TEST(InterpreterIsa, JumpsCompareTheRightWidth) {
  // r1 = 0x100000005: w1 == 5 but r1 != 5.
  auto branch = [](uint8_t cls, uint8_t op, int32_t imm) {
    return std::vector<Insn>{VM_LD_IMM64(1, 0x100000005), VM_MOV64_IMM(0, 1),
                             VM_INSN(cls | op | BPF_K, 1, 0, 1, imm),
                             VM_MOV64_IMM(0, 0), VM_EXIT()};
  };
  EXPECT_EQ(result(branch(BPF_JMP32, BPF_JEQ, 5)), 1u);
  EXPECT_EQ(result(branch(BPF_JMP, BPF_JEQ, 5)), 0u);
  EXPECT_EQ(result(branch(BPF_JMP, BPF_JGT, 5)), 1u);
  EXPECT_EQ(result(branch(BPF_JMP32, BPF_JSLT, -1)), 0u);
  EXPECT_EQ(result(branch(BPF_JMP, BPF_JSET, 4)), 1u);
  EXPECT_EQ(result(branch(BPF_JMP32, BPF_JSET, 2)), 0u);
  // An immediate is sign-extended for 64-bit compares: -1 is 2^64-1.
  EXPECT_EQ(result(branch(BPF_JMP, BPF_JLT, -1)), 1u);
  // gotol (v4) keeps its offset in imm.
  EXPECT_EQ(result({VM_MOV64_IMM(0, 1), VM_INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, 1),
                    VM_MOV64_IMM(0, 2), VM_EXIT()}),
            1u);
}

TEST(InterpreterIsa, Atomics) {
  // fp-8 = 10; fetch_add 5 -> r1 = 10, mem 15; and so on, summed into r0.
  std::vector<Insn> prog = {
      VM_ST_MEM(BPF_DW, 10, -8, 10), VM_MOV64_IMM(1, 5),
      VM_ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 10, 1, -8), // r1 = 10, m = 15
      VM_MOV64_IMM(2, 0x30),
      VM_ATOMIC(BPF_DW, BPF_OR | BPF_FETCH, 10, 2, -8), // r2 = 15, m = 0x3f
      VM_MOV64_IMM(3, 0x0c),
      VM_ATOMIC(BPF_DW, BPF_AND | BPF_FETCH, 10, 3, -8), // r3 = 0x3f, m = 0x0c
      VM_MOV64_IMM(4, 0xff),
      VM_ATOMIC(BPF_DW, BPF_XOR | BPF_FETCH, 10, 4, -8), // r4 = 0x0c, m = 0xf3
      VM_MOV64_IMM(5, 7),
      VM_ATOMIC(BPF_DW, BPF_XCHG, 10, 5, -8), // r5 = 0xf3, m = 7
      VM_MOV64_IMM(0, 7), VM_MOV64_IMM(6, 100),
      VM_ATOMIC(BPF_DW, BPF_CMPXCHG, 10, 6, -8), // r0 = 7, m = 100
      VM_MOV64_IMM(0, 1), VM_MOV64_IMM(7, 200),
      VM_ATOMIC(BPF_DW, BPF_CMPXCHG, 10, 7, -8), // fails: r0 = 100, m = 100
      VM_MOV64_IMM(8, 1), VM_ATOMIC(BPF_DW, BPF_ADD, 10, 8, -8), // m = 101
      VM_LDX_MEM(BPF_DW, 9, 10, -8),
      // r0 = r0 + r1 + r2 + r3 + r4 + r5 + r9
      VM_ALU64_REG(BPF_ADD, 0, 1), VM_ALU64_REG(BPF_ADD, 0, 2),
      VM_ALU64_REG(BPF_ADD, 0, 3), VM_ALU64_REG(BPF_ADD, 0, 4),
      VM_ALU64_REG(BPF_ADD, 0, 5), VM_ALU64_REG(BPF_ADD, 0, 9), VM_EXIT()};
  EXPECT_EQ(result(prog), 100u + 10 + 15 + 0x3f + 0x0c + 0xf3 + 101);
  // 32-bit fetch results are zero-extended and touch only 4 bytes.
  EXPECT_EQ(result({VM_ST_MEM(BPF_DW, 10, -8, -1), VM_MOV64_IMM(1, 1),
                    VM_ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, 10, 1, -8),
                    VM_LDX_MEM(BPF_DW, 0, 10, -8), VM_ALU64_REG(BPF_ADD, 0, 1),
                    VM_EXIT()}),
            0xffffffff00000000u + 0xffffffffu);
}

TEST(InterpreterIsa, CallsGetTheirOwnFrames) {
  //  0: *(u64 *)(fp-8) = 1
  //  1: r6 = 40
  //  2: r1 = 2
  //  3: call pc+5 (PC 9)
  //  4: r1 = *(u64 *)(fp-8)        still 1
  //  5: r0 += r1
  //  6: r0 += r6                   r6 survived the call
  //  7: exit
  //  8: (unused padding for the test: exit)
  //  9: *(u64 *)(fp-8) = 1000     the callee's own fp-8
  // 10: r6 = 7
  // 11: r0 = *(u64 *)(fp-8)
  // 12: r0 += r1
  // 13: exit
  EXPECT_EQ(
      result({VM_ST_MEM(BPF_DW, 10, -8, 1), VM_MOV64_IMM(6, 40),
              VM_MOV64_IMM(1, 2), VM_CALL_REL(5), VM_LDX_MEM(BPF_DW, 1, 10, -8),
              VM_ALU64_REG(BPF_ADD, 0, 1), VM_ALU64_REG(BPF_ADD, 0, 6),
              VM_EXIT(), VM_EXIT(), VM_ST_MEM(BPF_DW, 10, -8, 1000),
              VM_MOV64_IMM(6, 7), VM_LDX_MEM(BPF_DW, 0, 10, -8),
              VM_ALU64_REG(BPF_ADD, 0, 1), VM_EXIT()}),
      1000u + 2 + 1 + 40);
}

TEST(InterpreterIsa, BpfLoopLimits) {
  //  0: r1 = N (ld_imm64)
  //  2: r2 = func (PC 8)
  //  4: r3 = 0
  //  5: r4 = FLAGS
  //  6: call loop
  //  7: exit
  //  8: r0 = 0; exit
  auto loop = [](int64_t n, int32_t flags) {
    return std::vector<Insn>{VM_LD_IMM64(1, n),
                             VM_LD_FUNC(2, 5),
                             VM_MOV64_IMM(3, 0),
                             VM_MOV64_IMM(4, flags),
                             VM_CALL_HELPER(BPF_FUNC_loop),
                             VM_EXIT(),
                             VM_MOV64_IMM(0, 0),
                             VM_EXIT()};
  };
  EXPECT_EQ(result(loop(1000, 0)), 1000u);
  EXPECT_EQ(result(loop(0, 0)), 0u);
  EXPECT_EQ(result(loop((1 << 23) + 1, 0)), uint64_t(-E2BIG));
  EXPECT_EQ(result(loop(10, 1)), uint64_t(-EINVAL));
  // The instruction budget stops a run that is legal but too long.
  RunOptions small;
  small.max_insns = 10000;
  RunResult r = run_insns(loop(1 << 23, 0), nullptr, small);
  EXPECT_EQ(r.status, RunStatus::InsnBudgetExceeded);
  EXPECT_EQ(r.insns, 10001u);
}

TEST(InterpreterIsa, ContextIsR1) {
  uint64_t ctx[8] = {3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(result({VM_LDX_MEM(BPF_DW, 0, 1, 8), VM_LDX_MEM(BPF_DW, 2, 1, 56),
                    VM_ALU64_REG(BPF_MUL, 0, 2), VM_EXIT()},
                   ctx),
            40u);
}

TEST(InterpreterIsa, BindingRequiresEveryHelperAndMap) {
  auto verified =
      verify_insns({VM_CALL_HELPER(BPF_FUNC_get_numa_node_id), VM_EXIT()});
  ASSERT_TRUE(verified) << verified.error();
  auto bound = bind_program(*verified, {}, test_helpers());
  ASSERT_FALSE(bound);
  EXPECT_EQ(bound.error(), "PC 0: helper 42 has no implementation");

  auto with_map =
      verify_insns({VM_LD_MAP(1, 0), VM_MOV64_IMM(0, 0), VM_EXIT()});
  ASSERT_TRUE(with_map) << with_map.error();
  auto unbound = bind_program(*with_map, {}, test_helpers());
  ASSERT_FALSE(unbound);
  EXPECT_EQ(unbound.error(), "map 0 has no binding (0 bindings given)");
}

// What the sampler reads to ask the kernel only for what probes use
// (backends/userspace/system_sampler.cpp): the helpers some path calls,
// from the verifier, each once; a call on one branch counts.
TEST(InterpreterIsa, BoundProgramKnowsWhichHelpersSomePathCalls) {
  auto verified = verify_insns({VM_CALL_HELPER(BPF_FUNC_ktime_get_ns),   // 0
                                VM_JMP_IMM(BPF_JEQ, 0, 0, 2),            // 1
                                VM_CALL_HELPER(BPF_FUNC_get_prandom_u32), // 2
                                VM_CALL_HELPER(BPF_FUNC_ktime_get_ns),   // 3
                                VM_MOV64_IMM(0, 0), VM_EXIT()});
  ASSERT_TRUE(verified) << verified.error();
  auto bound = bind_program(*verified, {}, test_helpers());
  ASSERT_TRUE(bound) << bound.error();
  EXPECT_EQ(bound->called_helpers,
            (std::vector<int32_t>{BPF_FUNC_ktime_get_ns,
                                  BPF_FUNC_get_prandom_u32}));
  EXPECT_TRUE(bound->calls_helper(BPF_FUNC_get_prandom_u32));
  EXPECT_FALSE(bound->calls_helper(BPF_FUNC_get_stack));
}

} // namespace
} // namespace ubtrace::vm::test
