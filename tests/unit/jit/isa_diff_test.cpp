// Every instruction class, hand-assembled, on the values where BPF's
// semantics and the host's differ (division by zero, INT_MIN / -1, shifts
// past the width, 32-bit results, sign extension): the JIT must compute
// exactly what the interpreter computes. The operands come from the ctx, so
// neither engine can fold them.
#include "runtime/vm/asm.h"
#include "tests/unit/jit/diff_harness.h"

#include <cstring>
#include <gtest/gtest.h>
#include <random>

namespace ubtrace::jit::test {
namespace {

using vm::Insn;

const uint64_t kEdges[] = {0,
                           1,
                           2,
                           3,
                           7,
                           31,
                           32,
                           33,
                           63,
                           64,
                           65,
                           0xff,
                           0x8000,
                           0x7fffffff,
                           0x80000000,
                           0xffffffff,
                           0x100000000,
                           0x7fffffffffffffff,
                           0x8000000000000000,
                           0xfffffffffffffffe,
                           0xffffffffffffffff,
                           0x123456789abcdef0,
                           0xfffffffffffffff9}; // -7

// ctx: a at 0, b at 8, 48 more bytes of scratch.
std::vector<uint8_t> ctx_of(uint64_t a, uint64_t b) {
  std::vector<uint8_t> ctx(64);
  std::memcpy(ctx.data(), &a, 8);
  std::memcpy(ctx.data() + 8, &b, 8);
  for (size_t i = 16; i < ctx.size(); ++i)
    ctx[i] = uint8_t(a * 31 + b * 7 + i * 13);
  return ctx;
}

// r2 = a, r3 = b, then `body`, then r0 = r2 and store it at ctx+16.
std::vector<Insn> with_operands(std::initializer_list<Insn> body) {
  std::vector<Insn> prog = {VM_LDX_MEM(BPF_DW, 2, 1, 0),
                            VM_LDX_MEM(BPF_DW, 3, 1, 8)};
  prog.insert(prog.end(), body);
  prog.push_back(VM_STX_MEM(BPF_DW, 1, 2, 16));
  prog.push_back(VM_MOV64_REG(0, 2));
  prog.push_back(VM_EXIT());
  return prog;
}

// Every (a, b) pair of the lists, compiled once.
void expect_same(const std::vector<Insn> &prog, std::span<const uint64_t> as,
                 std::span<const uint64_t> bs) {
  std::vector<std::vector<uint8_t>> ctxs;
  for (uint64_t a : as)
    for (uint64_t b : bs)
      ctxs.push_back(ctx_of(a, b));
  EXPECT_EQ(diff_plain(prog, ctxs, true), "");
}
void expect_same(const std::vector<Insn> &prog, uint64_t a, uint64_t b) {
  expect_same(prog, std::span(&a, 1), std::span(&b, 1));
}

const uint8_t kAluOps[] = {BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV,
                           BPF_OR,  BPF_AND, BPF_LSH, BPF_RSH,
                           BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH};

TEST(IsaDiff, AluRegisterOperands) {
  for (uint8_t cls : {BPF_ALU64, BPF_ALU})
    for (uint8_t op : kAluOps)
      for (int16_t off : {0, 1}) { // off 1: sdiv/smod
        if (off && op != BPF_DIV && op != BPF_MOD)
          continue;
        auto prog = with_operands({VM_INSN(cls | op | BPF_X, 2, 3, off, 0)});
        expect_same(prog, kEdges, kEdges);
      }
}

TEST(IsaDiff, AluImmediateOperands) {
  const int32_t imms[] = {1,  -1, 2,          3,         7,  10,    31,
                          32, 63, 0x7fffffff, INT32_MIN, -7, 0x1337};
  for (uint8_t cls : {BPF_ALU64, BPF_ALU})
    for (uint8_t op : kAluOps)
      for (int32_t imm : imms) {
        bool shift = op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH;
        if (shift && (imm < 0 || imm >= (cls == BPF_ALU64 ? 64 : 32)))
          continue; // the verifier rejects constant shifts past the width
        for (int16_t off : {0, 1}) {
          if (off && op != BPF_DIV && op != BPF_MOD)
            continue;
          auto prog =
              with_operands({VM_INSN(cls | op | BPF_K, 2, 0, off, imm)});
          expect_same(prog, kEdges, std::span(kEdges, 1));
        }
      }
}

TEST(IsaDiff, NegMovsxAndByteSwaps) {
  std::vector<std::vector<Insn>> progs = {
      with_operands({VM_NEG64(2)}),
      with_operands({VM_NEG32(2)}),
      with_operands({VM_MOVSX64_REG(2, 3, 8)}),
      with_operands({VM_MOVSX64_REG(2, 3, 16)}),
      with_operands({VM_MOVSX64_REG(2, 3, 32)}),
      with_operands({VM_MOVSX32_REG(2, 3, 8)}),
      with_operands({VM_MOVSX32_REG(2, 3, 16)}),
      with_operands({VM_MOV32_REG(2, 3)}),
      with_operands({VM_MOV32_IMM(2, -1)}),
      with_operands({VM_MOV64_IMM(2, -1)}),
  };
  for (int32_t bits : {16, 32, 64}) {
    progs.push_back(with_operands({VM_ENDIAN(BPF_TO_LE, 2, bits)}));
    progs.push_back(with_operands({VM_ENDIAN(BPF_TO_BE, 2, bits)}));
    progs.push_back(with_operands({VM_BSWAP(2, bits)}));
  }
  const uint64_t bs[] = {0x80, 0x7f, 0xffff8000, 0x80000000,
                         0xfedcba9876543210};
  for (const auto &prog : progs)
    expect_same(prog, kEdges, bs);
}

TEST(IsaDiff, ConditionalJumpsBothWidths) {
  const uint8_t ops[] = {BPF_JEQ,  BPF_JNE,  BPF_JGT,  BPF_JGE,
                         BPF_JLT,  BPF_JLE,  BPF_JSGT, BPF_JSGE,
                         BPF_JSLT, BPF_JSLE, BPF_JSET};
  for (uint8_t cls : {BPF_JMP, BPF_JMP32})
    for (uint8_t op : ops) {
      // r2 = (a op b) ? a + 1 : a - 1
      auto reg = with_operands({VM_INSN(cls | op | BPF_X, 2, 3, 2, 0),
                                VM_ALU64_IMM(BPF_SUB, 2, 1), VM_JA(1),
                                VM_ALU64_IMM(BPF_ADD, 2, 1)});
      expect_same(reg, kEdges, kEdges);
      for (int32_t imm : {0, 1, -1, 32, INT32_MIN, 0x7fffffff}) {
        auto k = with_operands({VM_INSN(cls | op | BPF_K, 2, 0, 2, imm),
                                VM_ALU64_IMM(BPF_SUB, 2, 1), VM_JA(1),
                                VM_ALU64_IMM(BPF_ADD, 2, 1)});
        expect_same(k, kEdges, std::span(kEdges, 1));
      }
    }
}

TEST(IsaDiff, LoadsAndStoresOfEverySize) {
  const uint8_t sizes[] = {BPF_B, BPF_H, BPF_W, BPF_DW};
  for (uint8_t size : sizes)
    for (int16_t off : {16, 17, 19, 23, 40}) {
      // Zero- and sign-extending loads at unaligned offsets.
      expect_same(with_operands({VM_LDX_MEM(size, 2, 1, off)}), 1, 2);
      if (size != BPF_DW)
        expect_same(with_operands({VM_LDX_MEMSX(size, 2, 1, off)}), 1, 2);
      // Stores of registers and immediates, read back whole.
      expect_same(with_operands({VM_STX_MEM(size, 1, 2, off),
                                 VM_LDX_MEM(BPF_DW, 2, 1, 40)}),
                  kEdges, std::span(kEdges + 5, 1));
      for (uint64_t a : kEdges)
        expect_same(with_operands({VM_ST_MEM(size, 1, off, int32_t(a)),
                                   VM_LDX_MEM(BPF_DW, 2, 1, 40)}),
                    a, 9);
      // Through the stack, at unaligned offsets.
      expect_same(with_operands({VM_ST_MEM(BPF_DW, 10, -16, -1),
                                 VM_ST_MEM(BPF_DW, 10, -8, 0x1234567),
                                 VM_STX_MEM(size, 10, 3, -13),
                                 VM_LDX_MEM(BPF_DW, 2, 10, -16),
                                 VM_LDX_MEM(BPF_DW, 4, 10, -8),
                                 VM_ALU64_REG(BPF_XOR, 2, 4)}),
                  5, 0xa1b2c3d4e5f60718);
    }
}

TEST(IsaDiff, AtomicsOnCtxAndStack) {
  const int32_t ops[] = {BPF_ADD,
                         BPF_OR,
                         BPF_AND,
                         BPF_XOR,
                         BPF_ADD | BPF_FETCH,
                         BPF_OR | BPF_FETCH,
                         BPF_AND | BPF_FETCH,
                         BPF_XOR | BPF_FETCH,
                         BPF_XCHG,
                         BPF_CMPXCHG};
  const uint64_t olds[] = {0, 3, 0x5555aaaa5555aaaa, 0xffffffff, ~0ull};
  for (uint8_t size : {BPF_W, BPF_DW})
    for (int32_t op : ops) {
      // The old value b on the stack, operand a; cmpxchg's expected value
      // (r0) is b itself or b + 1.
      for (int32_t miss : {0, 1}) {
        auto prog = with_operands(
            {VM_STX_MEM(BPF_DW, 10, 3, -8), VM_MOV64_REG(0, 3),
             VM_ALU64_IMM(BPF_ADD, 0, miss), VM_ATOMIC(size, op, 10, 2, -8),
             VM_LDX_MEM(BPF_DW, 4, 10, -8), VM_ALU64_REG(BPF_XOR, 2, 4),
             VM_ALU64_REG(BPF_XOR, 2, 0)});
        expect_same(prog, kEdges, olds);
      }
    }
}

TEST(IsaDiff, WideConstantsAndLongJumps) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    uint64_t v = rng();
    auto prog = with_operands({VM_LD_IMM64(4, v), VM_ALU64_REG(BPF_ADD, 2, 4),
                               VM_INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, 1),
                               VM_ALU64_IMM(BPF_MUL, 2, 3)});
    expect_same(prog, rng(), 0);
  }
}

// A BPF-to-BPF call: the callee's frame is its own, r6..r9 survive, and a
// pointer into the caller's frame works in the callee.
TEST(IsaDiff, CallsKeepCalleeSavedRegistersAndFrames) {
  std::vector<Insn> prog = {
      VM_LDX_MEM(BPF_DW, 6, 1, 0),   // r6 = a
      VM_LDX_MEM(BPF_DW, 7, 1, 8),   // r7 = b
      VM_STX_MEM(BPF_DW, 10, 7, -8), // caller's slot = b
      VM_MOV64_REG(1, 6),            // r1 = a
      VM_MOV64_REG(2, 10),           // r2 = &slot
      VM_ALU64_IMM(BPF_ADD, 2, -8),  //
      VM_CALL_REL(5),                // r0 = f(a, &slot)
      VM_LDX_MEM(BPF_DW, 3, 10, -8), // the callee wrote the slot
      VM_ALU64_REG(BPF_XOR, 0, 3),   //
      VM_ALU64_REG(BPF_XOR, 0, 6),   // r6, r7 unchanged by the call
      VM_ALU64_REG(BPF_ADD, 0, 7),   //
      VM_EXIT(),                     //
      VM_LDX_MEM(BPF_DW, 3, 2, 0),   // f: r3 = *p
      VM_ALU64_IMM(BPF_MUL, 3, 5),   //
      VM_STX_MEM(BPF_DW, 2, 3, 0),   // *p = r3 * 5
      VM_MOV64_IMM(6, 99),           // clobber r6 in the callee
      VM_STX_MEM(BPF_DW, 10, 1, -8), // own frame
      VM_LDX_MEM(BPF_DW, 0, 10, -8), //
      VM_ALU64_REG(BPF_ADD, 0, 6),   // r0 = a + 99
      VM_EXIT(),
  };
  std::vector<std::vector<uint8_t>> ctxs;
  for (uint64_t a : kEdges)
    for (uint64_t b : {uint64_t(1), uint64_t(0xdead), uint64_t(-5)})
      ctxs.push_back(ctx_of(a, b));
  EXPECT_EQ(diff_plain(prog, ctxs, false), "");
}

} // namespace
} // namespace ubtrace::jit::test
