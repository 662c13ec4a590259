// The trampoline encoders, checked by decoding what they emit with Zydis.
#include "runtime/hook/code_buffer.h"
#include "runtime/hook/decoder.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace ubtrace::runtime::hook {
namespace {

std::vector<std::string> mnemonics(const CodeBuffer &c) {
  std::vector<std::string> out;
  size_t off = 0;
  while (off < c.size()) {
    Result<DecodedInsn> in =
        decode_insn(c.data() + off, c.size() - off, c.base() + off);
    if (!in.ok()) {
      out.push_back("?");
      break;
    }
    out.push_back(in->mnemonic);
    off += in->length;
  }
  return out;
}

TEST(HookCodeBuffer, EncodingsDecodeAsIntended) {
  CodeBuffer c(0x400000);
  x86::push(c, Reg::R15);
  x86::pop(c, Reg::Rbx);
  x86::push_imm(c, -1);
  x86::push_imm(c, 0x12345);
  x86::pushfq(c);
  x86::popfq(c);
  x86::lea_rsp(c, -128);
  x86::lea_from_rsp(c, Reg::Rax, 296);
  x86::store_rsp(c, 152, Reg::Rax);
  x86::load_from(c, Reg::R12, Reg::R12, 0);
  x86::store_to(c, Reg::Rbx, 168, Reg::Rax);
  x86::mov(c, Reg::Rdi, Reg::Rbx);
  x86::mov_imm64(c, Reg::Rsi, 0x1122334455667788);
  x86::mov_imm32(c, Reg::Rdx, 7);
  x86::xor32(c, Reg::Rax);
  x86::test64(c, Reg::R12, Reg::R12);
  x86::and_rsp_imm8(c, -64);
  x86::sub_rsp_imm32(c, 2688);
  x86::call(c, Reg::Rax);
  x86::jmp_rsp(c, -8);
  x86::call_rsp(c, -32);
  x86::ret(c);
  x86::cmovz(c, Reg::Rax, Reg::R9);
  x86::load_fs(c, Reg::Rdx, -16);
  x86::cmp_fs_byte_zero(c, -24);
  x86::load32_from(c, Reg::Rax, Reg::Rdx, 8);
  x86::load_u8_from(c, Reg::Rcx, Reg::Rcx, 16);
  x86::add_mem_imm8(c, 64, Reg::Rdx, 0, 1);
  x86::add_mem_imm8(c, 32, Reg::R9, 8, 1);
  x86::test_low8_imm(c, Reg::Rax, 1);
  x86::cmp_mem_zero(c, Reg::Rax, 8);
  x86::cmp32_imm8(c, Reg::Rax, 64);
  x86::shl32_imm(c, Reg::Rcx, 11);
  x86::add64(c, Reg::Rsi, Reg::Rcx);
  x86::sub64(c, Reg::Rsi, Reg::Rcx);
  x86::mov32(c, Reg::Rcx, Reg::Rax);
  x86::lea_indexed(c, Reg::Rax, Reg::Rdx, Reg::Rax, 8, 64);
  x86::xsavec64_rsp(c);
  x86::xsave64_rsp(c);
  x86::xrstor64_rsp(c);
  x86::fxsave64_rsp(c);
  x86::fxrstor64_rsp(c);
  ASSERT_TRUE(c.ok());
  std::vector<std::string> expected = {
      "push",     "pop",     "push",     "push",     "pushfq",
      "popfq",    "lea",     "lea",      "mov",      "mov",
      "mov",      "mov",     "mov",      "mov",      "xor",
      "test",     "and",     "sub",      "call",     "jmp",
      "call",     "ret",     "cmovz",    "mov",      "cmp",
      "mov",      "movzx",   "add",      "add",      "test",
      "cmp",      "cmp",     "shl",      "add",      "sub",
      "mov",      "lea",
      "xsavec64", "xsave64", "xrstor64", "fxsave64", "fxrstor64"};
  EXPECT_EQ(mnemonics(c), expected);
}

TEST(HookCodeBuffer, RegisterOperandsAreTheOnesAskedFor) {
  // lea rax,[rsp+296] must read rsp: check the exact bytes of a few forms.
  CodeBuffer c(0);
  x86::lea_from_rsp(c, Reg::Rax, 296);
  const uint8_t lea[] = {0x48, 0x8D, 0x84, 0x24, 0x28, 0x01, 0x00, 0x00};
  ASSERT_EQ(c.size(), sizeof lea);
  EXPECT_EQ(memcmp(c.data(), lea, sizeof lea), 0);

  CodeBuffer m(0);
  x86::mov(m, Reg::Rdi, Reg::Rbx); // 48 89 DF
  const uint8_t mov[] = {0x48, 0x89, 0xDF};
  ASSERT_EQ(m.size(), sizeof mov);
  EXPECT_EQ(memcmp(m.data(), mov, sizeof mov), 0);

  CodeBuffer l(0);
  x86::load_from(l, Reg::R12, Reg::R12, 0); // 4D 8B A4 24 00000000
  const uint8_t load[] = {0x4D, 0x8B, 0xA4, 0x24, 0, 0, 0, 0};
  ASSERT_EQ(l.size(), sizeof load);
  EXPECT_EQ(memcmp(l.data(), load, sizeof load), 0);

  CodeBuffer k(0);
  x86::cmovz(k, Reg::Rax, Reg::R9); // 49 0F 44 C1
  x86::call_rsp(k, -32);            // FF 54 24 E0
  const uint8_t cmov_call[] = {0x49, 0x0F, 0x44, 0xC1, 0xFF, 0x54, 0x24, 0xE0};
  ASSERT_EQ(k.size(), sizeof cmov_call);
  EXPECT_EQ(memcmp(k.data(), cmov_call, sizeof cmov_call), 0);

  // The thread-state loads of the lean return entry: fs-relative, absolute.
  CodeBuffer f(0);
  x86::load_fs(f, Reg::Rdx, -16);         // 64 48 8B 14 25 F0FFFFFF
  x86::cmp_fs_byte_zero(f, 8);            // 64 80 3C 25 08000000 00
  x86::lea_indexed(f, Reg::Rax, Reg::Rdx, Reg::Rax, 8, 16); // 48 8D 84 C2 10000000
  const uint8_t fs[] = {0x64, 0x48, 0x8B, 0x14, 0x25, 0xF0, 0xFF, 0xFF, 0xFF,
                        0x64, 0x80, 0x3C, 0x25, 0x08, 0, 0, 0, 0,
                        0x48, 0x8D, 0x84, 0xC2, 0x10, 0, 0, 0};
  ASSERT_EQ(f.size(), sizeof fs);
  EXPECT_EQ(memcmp(f.data(), fs, sizeof fs), 0);
}

TEST(HookCodeBuffer, JumpsNearAndFar) {
  CodeBuffer c(0x10000000);
  x86::jmp(c, 0x10001000);          // rel32
  x86::jmp(c, 0x7f0000000000);      // absolute
  x86::jcc(c, 0x5, 0x10002000);     // jne rel32
  x86::jcc(c, 0x5, 0x7f0000000000); // je over absolute
  ASSERT_TRUE(c.ok());
  std::vector<uint64_t> targets;
  size_t off = 0;
  while (off < c.size()) {
    Result<DecodedInsn> in =
        decode_insn(c.data() + off, c.size() - off, c.base() + off);
    ASSERT_TRUE(in.ok());
    if (in->kind == InsnKind::JumpIndirect) {
      uint64_t t;
      memcpy(&t, c.data() + (in->memory_target - c.base()), 8);
      targets.push_back(t);
      off += in->length + 8;
      continue;
    }
    targets.push_back(in->branch_target);
    off += in->length;
  }
  std::vector<uint64_t> expected = {0x10001000, 0x7f0000000000, 0x10002000,
                                    c.base() + 5 + 14 + 6 + 2 + 14,
                                    0x7f0000000000};
  EXPECT_EQ(targets, expected);
}

TEST(HookCodeBuffer, OverflowIsReported) {
  CodeBuffer c(0);
  for (size_t i = 0; i <= CodeBuffer::kCapacity; ++i)
    c.u8(0x90);
  EXPECT_FALSE(c.ok());
}

} // namespace
} // namespace ubtrace::runtime::hook
