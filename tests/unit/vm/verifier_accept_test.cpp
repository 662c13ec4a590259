// What the verifier must accept (patterns clang emits), what it learns about
// an accepted program, and that pruning equal-looking paths never hides an
// unsafe one.
#include "verifier_test_util.h"

#include <gtest/gtest.h>

namespace ubtrace::vm::test {
namespace {

// r0 = lookup(map 0, key 0); if r0 == 0 exit 0; then the body (PC 8 on).
//   0: *(u64 *)(fp-8) = 0
//   1: r2 = fp; 2: r2 += -8; 3: r1 = map[0]; 5: call lookup
//   6: if r0 != 0 goto +2
//   7: exit (r0 is 0)
//   8: body...
#define LOOKUP_OR_EXIT                                                         \
  VM_ST_MEM(BPF_DW, 10, -8, 0), VM_MOV64_REG(2, 10),                           \
      VM_ALU64_IMM(BPF_ADD, 2, -8), VM_LD_MAP(1, 0),                           \
      VM_CALL_HELPER(BPF_FUNC_map_lookup_elem), VM_JMP_IMM(BPF_JNE, 0, 0, 1),  \
      VM_EXIT()

TEST(VerifierAccepts, SpilledRegistersComeBackWhole) {
  // A pointer and a bounded index survive a trip through the stack.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 6, 1, 0), LOOKUP_OR_EXIT,
                     VM_ALU64_IMM(BPF_AND, 6, 1),    //  8
                     VM_ALU64_IMM(BPF_LSH, 6, 3),    //  9
                     VM_STX_MEM(BPF_DW, 10, 0, -16), // 10 spill ptr
                     VM_STX_MEM(BPF_DW, 10, 6, -24), // 11 spill idx
                     VM_LDX_MEM(BPF_DW, 1, 10, -16), // 12
                     VM_LDX_MEM(BPF_DW, 2, 10, -24), // 13
                     VM_ALU64_REG(BPF_ADD, 1, 2),    // 14
                     VM_LDX_MEM(BPF_DW, 0, 1, 0),    // 15
                     VM_EXIT()}),
            "accepted");
}

TEST(VerifierAccepts, NullChecksAndBoundsReachCopies) {
  // The NULL check is on a copy (r6); r0 is used.
  EXPECT_EQ(
      verdict({VM_ST_MEM(BPF_DW, 10, -8, 0), VM_MOV64_REG(2, 10),
               VM_ALU64_IMM(BPF_ADD, 2, -8), VM_LD_MAP(1, 0),
               VM_CALL_HELPER(BPF_FUNC_map_lookup_elem), VM_MOV64_REG(6, 0),
               VM_JMP_IMM(BPF_JEQ, 6, 0, 2), VM_LDX_MEM(BPF_DW, 0, 0, 8),
               VM_EXIT(), VM_MOV64_IMM(0, 0), VM_EXIT()}),
      "accepted");
  // The bound is learnt on a copy (r3); r6 indexes. Body from PC 9.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 6, 1, 0), LOOKUP_OR_EXIT,
                     VM_MOV64_REG(3, 6), VM_JMP_IMM(BPF_JGT, 3, 8, 3),
                     VM_ALU64_REG(BPF_ADD, 0, 6), VM_LDX_MEM(BPF_DW, 0, 0, 0),
                     VM_EXIT(), VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "accepted");
  // A 32-bit check bounds a zero-extended load; signed checks work too.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_W, 6, 1, 0), LOOKUP_OR_EXIT,
                     VM_JMP32_IMM(BPF_JGT, 6, 8, 3),
                     VM_ALU64_REG(BPF_ADD, 0, 6), VM_LDX_MEM(BPF_DW, 0, 0, 0),
                     VM_EXIT(), VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "accepted");
  EXPECT_EQ(
      verdict({VM_LDX_MEM(BPF_DW, 6, 1, 0), LOOKUP_OR_EXIT,
               VM_JMP_IMM(BPF_JSGT, 6, 8, 4), VM_JMP_IMM(BPF_JSLT, 6, 0, 3),
               VM_ALU64_REG(BPF_ADD, 0, 6), VM_LDX_MEM(BPF_DW, 0, 0, 0),
               VM_EXIT(), VM_MOV64_IMM(0, 0), VM_EXIT()}),
      "accepted");
  // Without the lower bound, a negative index gets through: rejected.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 6, 1, 0), LOOKUP_OR_EXIT,
                     VM_JMP_IMM(BPF_JSGT, 6, 8, 3), VM_ALU64_REG(BPF_ADD, 0, 6),
                     VM_LDX_MEM(BPF_DW, 0, 0, 0), VM_EXIT(), VM_MOV64_IMM(0, 0),
                     VM_EXIT()}),
            "PC 10: pointer arithmetic on map_value pointer r0 with unbounded "
            "value (scalar in [-9223372036854775808, 8]) prohibited");
}

TEST(VerifierAccepts, StackReadsAtVariableOffsets) {
  // buf[fp-16..fp-1] written; read buf[i] for i = ctx & 15.
  std::vector<Insn> prog = {VM_ST_MEM(BPF_DW, 10, -16, 1),
                            VM_ST_MEM(BPF_DW, 10, -8, 2),
                            VM_LDX_MEM(BPF_DW, 2, 1, 0),
                            VM_ALU64_IMM(BPF_AND, 2, 15),
                            VM_MOV64_REG(3, 10),
                            VM_ALU64_IMM(BPF_ADD, 3, -16),
                            VM_ALU64_REG(BPF_ADD, 3, 2),
                            VM_LDX_MEM(BPF_B, 0, 3, 0),
                            VM_EXIT()};
  EXPECT_EQ(verdict(prog), "accepted");
  prog[1] = VM_ST_MEM(BPF_W, 10, -8, 2); // fp-4..fp-1 never written
  EXPECT_EQ(verdict(prog), "PC 7: invalid read from uninitialized stack at "
                           "fp-4 (reading fp-16 size 16)");
}

TEST(VerifierAccepts, HelpersInitialiseWhatTheyWrite) {
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 3, 1, 0), VM_MOV64_REG(1, 10),
                     VM_ALU64_IMM(BPF_ADD, 1, -16), VM_MOV64_IMM(2, 16),
                     VM_CALL_HELPER(BPF_FUNC_probe_read_user),
                     VM_LDX_MEM(BPF_DW, 0, 10, -16), VM_EXIT()}),
            "accepted");
}

TEST(VerifierAccepts, LoopBoundsFromReadOnlyData) {
  // .rodata byte 0 is '%' (37): for (i = 0; i < rodata[0]; i++).
  EXPECT_EQ(verdict({VM_LD_MAP_VALUE(1, 2, 0), VM_LDX_MEM(BPF_B, 2, 1, 0),
                     VM_MOV64_IMM(0, 0), VM_ALU64_IMM(BPF_ADD, 0, 1),
                     VM_JMP_REG(BPF_JLT, 0, 2, -2), VM_EXIT()}),
            "accepted");
}

TEST(VerifierAccepts, LoopsOverPointers) {
  // for (p = fp-64; p != fp; p += 8) *p = 0;
  EXPECT_EQ(verdict({VM_MOV64_REG(1, 10), VM_ALU64_IMM(BPF_ADD, 1, -64),
                     VM_ST_MEM(BPF_DW, 1, 0, 0), VM_ALU64_IMM(BPF_ADD, 1, 8),
                     VM_JMP_REG(BPF_JNE, 1, 10, -3),
                     VM_LDX_MEM(BPF_DW, 0, 10, -8), VM_EXIT()}),
            "accepted");
}

TEST(VerifierAccepts, CallbacksThatChangeTheCallerState) {
  // bpf_loop(100, cb, fp-8, 0) where cb does (*ctx)++: the count differs
  // every round, so the callback's rounds must converge by widening.
  //  0: *(u64 *)(fp-8) = 0
  //  1: r1 = 100
  //  2: r2 = func (PC 10)
  //  4: r3 = fp - 8
  //  6: r4 = 0
  //  7: call loop
  //  8: r0 = *(u64 *)(fp-8)
  //  9: exit
  // 10: r1 = *(u64 *)(r2 + 0); r1 += 1; *(u64 *)(r2 + 0) = r1; r0 = 0; exit
  std::vector<Insn> prog = {VM_ST_MEM(BPF_DW, 10, -8, 0),
                            VM_MOV64_IMM(1, 100),
                            VM_LD_FUNC(2, 7),
                            VM_MOV64_REG(3, 10),
                            VM_ALU64_IMM(BPF_ADD, 3, -8),
                            VM_MOV64_IMM(4, 0),
                            VM_CALL_HELPER(BPF_FUNC_loop),
                            VM_LDX_MEM(BPF_DW, 0, 10, -8),
                            VM_EXIT(),
                            VM_LDX_MEM(BPF_DW, 1, 2, 0),
                            VM_ALU64_IMM(BPF_ADD, 1, 1),
                            VM_STX_MEM(BPF_DW, 2, 1, 0),
                            VM_MOV64_IMM(0, 0),
                            VM_EXIT()};
  auto v = verify_insns(prog);
  ASSERT_TRUE(v) << v.error();
  ASSERT_EQ(v->subprogs.size(), 2u);
  EXPECT_TRUE(v->subprogs[1].is_callback);
  ASSERT_EQ(v->helper_calls.size(), 1u);
  EXPECT_EQ(v->helper_calls[0].pc, 7u);
  EXPECT_EQ(v->helper_calls[0].callback, 10);
  EXPECT_EQ(v->subprogs[0].stack_depth, 8u);
}

TEST(VerifierAccepts, IndependentBranchesDoNotMultiplyPaths) {
  // 200 diamonds `r6 = (ctx[i] & 1) ? 1 : 2; r7 += r6` whose results only
  // reach the return value: paths must merge, not double.
  std::vector<Insn> prog = {VM_MOV64_IMM(7, 0)};
  for (int i = 0; i < 200; ++i) {
    prog.push_back(VM_LDX_MEM(BPF_DW, 8, 1, 8 * (i % 8)));
    prog.push_back(VM_MOV64_IMM(6, 1));
    prog.push_back(VM_JMP_IMM(BPF_JSET, 8, 1, 1));
    prog.push_back(VM_MOV64_IMM(6, 2));
    prog.push_back(VM_ALU64_REG(BPF_ADD, 7, 6));
  }
  prog.push_back(VM_MOV64_REG(0, 7));
  prog.push_back(VM_EXIT());
  auto v = verify_insns(prog);
  ASSERT_TRUE(v) << v.error();
  EXPECT_LT(v->stats.processed_insns, 2 * prog.size());
}

TEST(VerifierAccepts, MergingNeverHidesAnUnsafePath) {
  // r6 is 0 on one path and 12 on the other, then indexes a 16-byte value
  // with an 8-byte load: the second path is out of bounds, even though the
  // first reached the join point first.
  auto diamond = [](int bad_offset) {
    return std::vector<Insn>{
        VM_LDX_MEM(BPF_DW, 7, 1, 0),
        LOOKUP_OR_EXIT,
        VM_MOV64_IMM(6, 0),             //  8
        VM_JMP_IMM(BPF_JEQ, 7, 0, 1),   //  9
        VM_MOV64_IMM(6, bad_offset),    // 10
        VM_STX_MEM(BPF_DW, 10, 6, -16), // 11 through the stack too
        VM_LDX_MEM(BPF_DW, 6, 10, -16), // 12
        VM_ALU64_REG(BPF_ADD, 0, 6),    // 13
        VM_LDX_MEM(BPF_DW, 0, 0, 0),    // 14
        VM_EXIT()};
  };
  EXPECT_EQ(verdict(diamond(8)), "accepted");
  EXPECT_EQ(verdict(diamond(12)),
            "PC 15: map 'hash' value access out of bounds: offset 12 size 8, "
            "map 'hash' value is 16 bytes");
}

TEST(VerifierAccepts, StackLivenessNeverHidesAnUnsafePath) {
  // fp-16 is written on one path only; after two merges it is read. The
  // path that did not write it must not be pruned by the one that did.
  //  0: r6 = ctx[0]
  //  1: if r6 == 0 goto 3
  //  2: *(u64 *)(fp-16) = 1
  //  3: r7 = ctx[8]
  //  4: if r7 == 0 goto 6
  //  5: r0 = 1
  //  6: r0 = *(u64 *)(fp-16)
  //  7: exit
  std::vector<Insn> prog = {
      VM_LDX_MEM(BPF_DW, 6, 1, 0),    VM_JMP_IMM(BPF_JEQ, 6, 0, 1),
      VM_ST_MEM(BPF_DW, 10, -16, 1),  VM_LDX_MEM(BPF_DW, 7, 1, 8),
      VM_JMP_IMM(BPF_JEQ, 7, 0, 1),   VM_MOV64_IMM(0, 1),
      VM_LDX_MEM(BPF_DW, 0, 10, -16), VM_EXIT()};
  EXPECT_EQ(verdict(prog), "PC 6: invalid read from uninitialized stack at "
                           "fp-16 (reading fp-16 size 8)");
  // A slot nobody reads again does not keep paths apart.
  prog[6] = VM_MOV64_IMM(0, 2);
  auto v = verify_insns(prog);
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ(v->stats.pruned, 2u);
}

TEST(VerifierAccepts, NumbersStoredThroughOtherPointersAreForgotten) {
  // The value goes to fp-16 through r1 (not r10): it comes back unknown,
  // so using it as an offset is rejected. This is the rule that lets the
  // relevance analysis follow stack values through r10 only.
  EXPECT_EQ(
      verdict({LOOKUP_OR_EXIT, VM_MOV64_IMM(6, 0), VM_MOV64_REG(1, 10),
               VM_ALU64_IMM(BPF_ADD, 1, -16), VM_STX_MEM(BPF_DW, 1, 6, 0),
               VM_LDX_MEM(BPF_DW, 6, 10, -16), VM_ALU64_REG(BPF_ADD, 0, 6),
               VM_LDX_MEM(BPF_DW, 0, 0, 0), VM_EXIT()}),
      "PC 13: pointer arithmetic on map_value pointer r0 with unbounded "
      "value (scalar) prohibited");
}

TEST(VerifierAccepts, ReportsWhatTheJitNeeds) {
  std::vector<Insn> prog = {VM_LD_MAP(1, 0),    VM_LD_MAP_VALUE(2, 2, 1),
                            VM_CALL_REL(2),     VM_MOV64_IMM(0, 0),
                            VM_EXIT(),          VM_ST_MEM(BPF_DW, 10, -24, 0),
                            VM_MOV64_IMM(0, 0), VM_EXIT()};
  auto v = verify_insns(prog);
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ(v->maps_used, (std::vector<uint32_t>{0, 2}));
  ASSERT_EQ(v->subprogs.size(), 2u);
  EXPECT_EQ(v->subprogs[1].start, 7u);
  EXPECT_EQ(v->subprogs[1].end, 10u);
  EXPECT_EQ(v->subprogs[1].stack_depth, 24u);
  EXPECT_FALSE(v->subprogs[1].is_callback);
}

TEST(VerifierAccepts, ReportsWhichContextBytesSomePathReads) {
  auto none = verify_insns({VM_MOV64_IMM(0, 0), VM_EXIT()});
  ASSERT_TRUE(none) << none.error();
  EXPECT_GE(none->ctx_read_lo, none->ctx_read_hi);
  // Reads on two branches, one through a copy spilled to the stack: the
  // span covers both ([8, 44)); a store into the stack is not a read.
  auto two = verify_insns({VM_LDX_MEM(BPF_DW, 2, 1, 16),       // 0
                           VM_JMP_IMM(BPF_JEQ, 2, 0, 4),       // 1
                           VM_STX_MEM(BPF_DW, 10, 1, -8),      // 2
                           VM_LDX_MEM(BPF_DW, 3, 10, -8),      // 3
                           VM_LDX_MEM(BPF_W, 0, 3, 40),        // 4
                           VM_EXIT(),                          // 5
                           VM_LDX_MEM(BPF_B, 0, 1, 8), VM_EXIT()});
  ASSERT_TRUE(two) << two.error();
  EXPECT_EQ(two->ctx_read_lo, 8u);
  EXPECT_EQ(two->ctx_read_hi, 44u);
  // A helper handed the context may read any of it.
  auto helper = verify_insns({VM_MOV64_REG(2, 10), VM_ALU64_IMM(BPF_ADD, 2, -64),
                              VM_MOV64_IMM(3, 64), VM_MOV64_IMM(4, 256),
                              VM_CALL_HELPER(BPF_FUNC_get_stack),
                              VM_MOV64_IMM(0, 0), VM_EXIT()});
  ASSERT_TRUE(helper) << helper.error();
  EXPECT_EQ(helper->ctx_read_lo, 0u);
  EXPECT_EQ(helper->ctx_read_hi, 64u);
}

} // namespace
} // namespace ubtrace::vm::test
