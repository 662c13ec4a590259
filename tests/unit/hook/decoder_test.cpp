// Decoding of real prologues (test_functions.S).
#include "runtime/hook/decoder.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;

DecodedInsn first(uint64_t at) {
  Result<DecodedInsn> in =
      decode_insn(reinterpret_cast<const uint8_t *>(at), 15, at);
  EXPECT_TRUE(in.ok()) << in.error();
  return in.ok() ? *in : DecodedInsn{};
}

TEST(HookDecoder, RipRelativeLea) {
  DecodedInsn in = first(addr(hk_rip_lea));
  EXPECT_EQ(in.kind, InsnKind::RipMemory);
  EXPECT_EQ(in.length, 7);
  EXPECT_TRUE(in.rip_relative);
  EXPECT_EQ(in.memory_target, reinterpret_cast<uint64_t>(&hk_data));
}

TEST(HookDecoder, RipRelativeCompareWithImmediate) {
  // The disp32 is followed by an imm8: the target counts from the end of
  // the whole instruction.
  DecodedInsn in = first(addr(hk_rip_cmp));
  EXPECT_EQ(in.kind, InsnKind::RipMemory);
  EXPECT_EQ(in.length, 11); // 48 81 3D disp32 imm32
  EXPECT_EQ(in.memory_target, reinterpret_cast<uint64_t>(&hk_data));
}

TEST(HookDecoder, ShortConditionalJump) {
  uint64_t fn = addr(hk_short_jcc);
  DecodedInsn test = first(fn);
  EXPECT_EQ(test.kind, InsnKind::Plain);
  DecodedInsn je = first(fn + test.length);
  EXPECT_EQ(je.kind, InsnKind::CondJumpRel);
  EXPECT_EQ(je.length, 2);
  EXPECT_EQ(je.condition, 0x4); // e/z
  // test(3) je(2) mov eax,1(5) ret(1): the target is the second mov.
  EXPECT_EQ(je.branch_target, fn + 11);
}

TEST(HookDecoder, Endbr64) {
  EXPECT_EQ(first(addr(hk_endbr)).kind, InsnKind::Endbr64);
}

TEST(HookDecoder, Calls) {
  DecodedInsn rel = first(addr(hk_call_first));
  EXPECT_EQ(rel.kind, InsnKind::CallRel);
  EXPECT_EQ(rel.branch_target, addr(hk_helper_one));
  DecodedInsn ind = first(addr(hk_call_rip));
  EXPECT_EQ(ind.kind, InsnKind::CallIndirect);
  EXPECT_TRUE(ind.rip_relative);
  EXPECT_FALSE(ind.uses_rsp);
  EXPECT_EQ(*reinterpret_cast<const uint64_t *>(ind.memory_target),
            addr(hk_helper_one));
}

TEST(HookDecoder, JumpAndReturn) {
  DecodedInsn jmp = first(addr(hk_jmp_first));
  EXPECT_EQ(jmp.kind, InsnKind::JumpRel);
  EXPECT_EQ(jmp.branch_target, addr(hk_helper_inc));
  EXPECT_TRUE(ends_flow(jmp.kind));
  EXPECT_EQ(first(addr(hk_tiny1)).kind, InsnKind::Return);
}

TEST(HookDecoder, NotRelocatable) {
  EXPECT_EQ(first(addr(hk_starts_int3)).kind, InsnKind::Int3);
  EXPECT_EQ(first(addr(hk_starts_jrcxz)).kind, InsnKind::Unsupported);
}

TEST(HookDecoder, TruncatedInstructionFails) {
  const uint8_t movabs[] = {0x48, 0xB8, 1, 2, 3}; // needs 10 bytes
  Result<DecodedInsn> in = decode_insn(movabs, sizeof movabs, 0x1000);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error(), "cannot decode the instruction at 0x1000");
}

// Which functions may hold a vector value across a system call made in
// them (syscall_fast.cpp's choice of entry).
TEST(HookDecoder, VectorStateOfWholeFunctions) {
  FunctionBounds avx = testing::bounds_of(hk_ymm_add);
  FunctionBounds avx_caller = testing::bounds_of(hk_ymm_run);
  FunctionBounds integer = testing::bounds_of(hk_rip_lea);
  FunctionBounds calls = testing::bounds_of(hk_invoke);
  EXPECT_TRUE(code_touches_vector_state(avx.start, avx.size));
  EXPECT_TRUE(code_touches_vector_state(avx_caller.start, avx_caller.size));
  EXPECT_FALSE(code_touches_vector_state(integer.start, integer.size));
  EXPECT_FALSE(code_touches_vector_state(calls.start, calls.size));
  EXPECT_TRUE(first(avx.start).vector_state);
  EXPECT_FALSE(first(integer.start).vector_state);
  // Bytes that do not decode may be anything.
  static const uint8_t junk[] = {0x0f, 0x0b, 0xff, 0xff, 0xff};
  EXPECT_TRUE(code_touches_vector_state(reinterpret_cast<uint64_t>(junk) + 2,
                                        3));
}

} // namespace
} // namespace ubtrace::runtime::hook
