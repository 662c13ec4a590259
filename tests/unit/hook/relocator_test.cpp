// Relocation of real prologues to near and far addresses, checked by
// decoding the result. (Running relocated code is what the hook tests do.)
#include "runtime/hook/relocator.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <gtest/gtest.h>
#include <vector>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;

std::vector<DecodedInsn> decode_n(uint64_t at, size_t n) {
  std::vector<DecodedInsn> out;
  for (size_t i = 0; i < n; ++i) {
    Result<DecodedInsn> in =
        decode_insn(reinterpret_cast<const uint8_t *>(at), 15, at);
    EXPECT_TRUE(in.ok());
    out.push_back(*in);
    at += in->length;
  }
  return out;
}

// Decodes the relocated bytes as if they lived at code.base().
std::vector<DecodedInsn> decode_buffer(const CodeBuffer &code) {
  std::vector<DecodedInsn> out;
  size_t off = 0;
  while (off < code.size()) {
    Result<DecodedInsn> in =
        decode_insn(code.data() + off, code.size() - off, code.base() + off);
    if (!in.ok())
      break;
    out.push_back(*in);
    off += in->length;
  }
  return out;
}

TEST(HookRelocator, ShortJccWidenedNear) {
  uint64_t fn = addr(hk_short_jcc);
  std::vector<DecodedInsn> in = decode_n(fn, 2); // test; je
  CodeBuffer code(fn + (1u << 20));
  uint32_t starts[2];
  ASSERT_TRUE(relocate(code, in.data(), 2, fn + 5, starts).ok());
  std::vector<DecodedInsn> out = decode_buffer(code);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].length, in[0].length); // test copied
  EXPECT_EQ(out[1].kind, InsnKind::CondJumpRel);
  EXPECT_EQ(out[1].length, 6); // 0F 84 rel32
  EXPECT_EQ(out[1].condition, in[1].condition);
  EXPECT_EQ(out[1].branch_target, in[1].branch_target);
  EXPECT_EQ(out[2].kind, InsnKind::JumpRel); // back to fn + 5
  EXPECT_EQ(out[2].branch_target, fn + 5);
  EXPECT_EQ(starts[0], 0u);
  EXPECT_EQ(starts[1], in[0].length);
}

TEST(HookRelocator, ShortJccBecomesInvertedJumpOverAbsoluteWhenFar) {
  uint64_t fn = addr(hk_short_jcc);
  std::vector<DecodedInsn> in = decode_n(fn, 2);
  CodeBuffer code(fn + (uint64_t{3} << 30)); // 3 GiB away
  uint32_t starts[2];
  ASSERT_TRUE(relocate(code, in.data(), 2, fn + 5, starts).ok());
  std::vector<DecodedInsn> out = decode_buffer(code);
  ASSERT_GE(out.size(), 3u);
  EXPECT_EQ(out[1].kind, InsnKind::CondJumpRel);
  EXPECT_EQ(out[1].condition, in[1].condition ^ 1); // jne over the jmp
  EXPECT_EQ(out[1].branch_target, out[1].address + 2 + 14);
  EXPECT_EQ(out[2].kind, InsnKind::JumpIndirect); // jmp [rip+0]
  ASSERT_TRUE(out[2].rip_relative);
  uint64_t literal_offset = out[2].memory_target - code.base();
  uint64_t target;
  memcpy(&target, code.data() + literal_offset, 8);
  EXPECT_EQ(target, in[1].branch_target);
}

TEST(HookRelocator, RipOperandReaimed) {
  uint64_t fn = addr(hk_rip_lea);
  std::vector<DecodedInsn> in = decode_n(fn, 1);
  CodeBuffer code(fn - (1u << 24));
  uint32_t starts[1];
  ASSERT_TRUE(relocate(code, in.data(), 1, fn + 7, starts).ok());
  std::vector<DecodedInsn> out = decode_buffer(code);
  ASSERT_GE(out.size(), 1u);
  EXPECT_EQ(out[0].kind, InsnKind::RipMemory);
  EXPECT_EQ(out[0].memory_target, reinterpret_cast<uint64_t>(&hk_data));
}

TEST(HookRelocator, RipOperandOutOfReachFails) {
  uint64_t fn = addr(hk_rip_lea);
  std::vector<DecodedInsn> in = decode_n(fn, 1);
  CodeBuffer code(fn + (uint64_t{5} << 30));
  uint32_t starts[1];
  Result<void> r = relocate(code, in.data(), 1, fn + 7, starts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("out of reach"), std::string::npos) << r.error();
}

TEST(HookRelocator, CallPushesTheOriginalReturnAddress) {
  uint64_t fn = addr(hk_call_first);
  std::vector<DecodedInsn> in = decode_n(fn, 1);
  CodeBuffer code(fn + (1u << 20));
  uint32_t starts[1];
  ASSERT_TRUE(relocate(code, in.data(), 1, fn + 5, starts).ok());
  std::vector<DecodedInsn> out = decode_buffer(code);
  ASSERT_GE(out.size(), 2u);
  // push qword [rip+x] where x holds fn + 5, then jmp hk_helper_one.
  ASSERT_TRUE(out[0].rip_relative);
  uint64_t pushed;
  memcpy(&pushed, code.data() + (out[0].memory_target - code.base()), 8);
  EXPECT_EQ(pushed, fn + 5);
  EXPECT_EQ(out[1].kind, InsnKind::JumpRel);
  EXPECT_EQ(out[1].branch_target, addr(hk_helper_one));
}

TEST(HookRelocator, IndirectCallBecomesPushAndIndirectJump) {
  uint64_t fn = addr(hk_call_rip);
  std::vector<DecodedInsn> in = decode_n(fn, 1);
  CodeBuffer code(fn + (1u << 20));
  uint32_t starts[1];
  ASSERT_TRUE(relocate(code, in.data(), 1, fn + 6, starts).ok());
  std::vector<DecodedInsn> out = decode_buffer(code);
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out[1].kind, InsnKind::JumpIndirect);
  EXPECT_EQ(out[1].memory_target, in[0].memory_target);
}

TEST(HookRelocator, CallMustBeLast) {
  uint64_t fn = addr(hk_call_first);
  std::vector<DecodedInsn> in = decode_n(fn, 2); // call; add
  CodeBuffer code(fn + (1u << 20));
  uint32_t starts[2];
  Result<void> r = relocate(code, in.data(), 2, fn + 8, starts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("a call must be the last displaced instruction"),
            std::string::npos);
}

} // namespace
} // namespace ubtrace::runtime::hook
