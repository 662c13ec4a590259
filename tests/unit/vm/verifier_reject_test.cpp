// Every verifier rejection, on the smallest hand-assembled program that
// shows it, with the exact message and PC.
#include "verifier_test_util.h"

#include <gtest/gtest.h>
#include <regex>

namespace ubtrace::vm::test {
namespace {

// Programs start with this to get a NULL-checked value of map 0 in r0:
//   0: *(u64 *)(r10 -8) = 0     key
//   1: r2 = r10
//   2: r2 += -8
//   3: r1 = map[0] ll
//   5: call map_lookup_elem
#define LOOKUP_MAP0                                                            \
  VM_ST_MEM(BPF_DW, 10, -8, 0), VM_MOV64_REG(2, 10),                           \
      VM_ALU64_IMM(BPF_ADD, 2, -8), VM_LD_MAP(1, 0),                           \
      VM_CALL_HELPER(BPF_FUNC_map_lookup_elem)

// --- structure -------------------------------------------------------------

TEST(VerifierRejects, UnknownOpcode) {
  EXPECT_EQ(verdict({VM_INSN(BPF_ALU64 | 0xf0 | BPF_K, 0, 0, 0, 0), VM_EXIT()}),
            "PC 0: unknown opcode 0xf7");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_INSN(BPF_JMP | 0xf0, 0, 0, 0, 0),
                     VM_EXIT()}),
            "PC 1: unknown opcode 0xf5");
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 0),
               VM_INSN(BPF_STX | BPF_MSH | BPF_B, 10, 0, -8, 0), VM_EXIT()}),
      "PC 1: unknown opcode 0xb3");
  EXPECT_EQ(verdict({VM_INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0), VM_EXIT()}),
            "PC 0: legacy packet access (BPF_ABS/BPF_IND) is not supported");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0),
                     VM_INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 0, -8, 0x30),
                     VM_EXIT()}),
            "PC 1: unknown atomic operation 48");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0),
                     VM_INSN(BPF_JMP | kOpJcond, 0, 0, 0, 0), VM_EXIT()}),
            "PC 1: may_goto is not supported");
}

TEST(VerifierRejects, MalformedFields) {
  EXPECT_EQ(verdict({VM_MOV64_IMM(11, 0), VM_EXIT()}),
            "PC 0: invalid register r11");
  EXPECT_EQ(
      verdict({VM_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 0, 3, 0, 1), VM_EXIT()}),
      "PC 0: reserved field 'src_reg' must be zero");
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 0),
               VM_INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 0, 0, 7), VM_EXIT()}),
      "PC 1: reserved field 'imm' must be zero");
  EXPECT_EQ(
      verdict({VM_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 4, 1), VM_EXIT()}),
      "PC 0: reserved field 'off' must be zero");
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 0), VM_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 1)}),
      "PC 1: malformed exit");
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 0), VM_ENDIAN(BPF_TO_BE, 0, 24), VM_EXIT()}),
      "PC 1: invalid byte swap width 24");
}

TEST(VerifierRejects, MalformedWideInstruction) {
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_EXIT(),
                     VM_INSN(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 1)}),
            "PC 2: ld_imm64 is missing its second half");
  EXPECT_EQ(verdict({VM_INSN(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 1),
                     VM_MOV64_IMM(0, 2), VM_EXIT()}),
            "PC 0: malformed ld_imm64: the second slot must hold only the "
            "upper 32 bits");
  EXPECT_EQ(verdict({VM_LD_IMM64_RAW(0, 3, 0, 0), VM_EXIT()}),
            "PC 0: unsupported ld_imm64 source 3");
  EXPECT_EQ(verdict({VM_LD_MAP(1, 7), VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 0: ld_imm64 refers to map 7, but there are 3 maps");
  EXPECT_EQ(verdict({VM_LD_MAP_VALUE(1, 2, 6), VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 0: offset 6 is outside the value of map '.rodata' (6 bytes)");
  EXPECT_EQ(verdict({VM_LD_MAP_VALUE(1, 0, 0), VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 0: direct value access needs an array map, 'hash' is not one");
}

TEST(VerifierRejects, JumpsOutOfRangeOrIntoAWideInstruction) {
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_JA(5), VM_EXIT()}),
            "PC 1: jump to PC 7 is out of range");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_JA(-3), VM_EXIT()}),
            "PC 1: jump to PC -1 is out of range");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_JMP_IMM(BPF_JEQ, 0, 0, 1),
                     VM_LD_IMM64(1, 5), VM_EXIT()}),
            "PC 1: jump into the middle of the ld_imm64 at PC 2");
  EXPECT_EQ(verdict({VM_CALL_REL(5), VM_EXIT()}),
            "PC 0: call to PC 6 is out of range");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_CALL_REL(1), VM_EXIT(),
                     VM_MOV64_IMM(0, 1), VM_JA(-3)}),
            "PC 4: jump to PC 2 leaves its function (PCs 3..4)");
}

TEST(VerifierRejects, FallThroughPastTheEnd) {
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0)}),
            "PC 0: falls through past the end of the program");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_EXIT(), VM_LD_IMM64(0, 1)}),
            "PC 3: falls through past the end of the program");
  EXPECT_EQ(
      verdict({VM_CALL_REL(2), VM_MOV64_IMM(0, 0), VM_ALU64_IMM(BPF_ADD, 0, 1),
               VM_MOV64_IMM(0, 0), VM_EXIT()}),
      "PC 2: falls through into the function at PC 3");
}

TEST(VerifierRejects, DivisionByZeroConstant) {
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 5), VM_ALU64_IMM(BPF_DIV, 0, 0), VM_EXIT()}),
      "PC 1: division by zero");
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 5), VM_ALU32_IMM(BPF_MOD, 0, 0), VM_EXIT()}),
      "PC 1: division by zero");
}

TEST(VerifierRejects, ShiftsByTheWidthOrMore) {
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 5), VM_ALU64_IMM(BPF_LSH, 0, 64), VM_EXIT()}),
      "PC 1: invalid shift by 64");
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 5), VM_ALU32_IMM(BPF_ARSH, 0, 32), VM_EXIT()}),
      "PC 1: invalid shift by 32");
}

TEST(VerifierRejects, WritesToTheFramePointer) {
  EXPECT_EQ(verdict({VM_MOV64_IMM(10, 0), VM_EXIT()}),
            "PC 0: write to r10, the read-only frame pointer");
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 10, 1, 0), VM_EXIT()}),
            "PC 0: write to r10, the read-only frame pointer");
  EXPECT_EQ(verdict({VM_ATOMIC(BPF_DW, BPF_XCHG, 1, 10, 0), VM_EXIT()}),
            "PC 0: write to r10, the read-only frame pointer");
}

TEST(VerifierRejects, KfuncCalls) {
  EXPECT_EQ(
      verdict({VM_INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 5),
               VM_EXIT()}),
      "PC 0: kfunc calls are not supported");
}

// --- registers and stack -----------------------------------------------------

TEST(VerifierRejects, UninitializedRegisters) {
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 1), VM_ALU64_REG(BPF_ADD, 0, 3), VM_EXIT()}),
      "PC 1: invalid read from uninitialized register r3");
  EXPECT_EQ(verdict({VM_EXIT()}),
            "PC 0: invalid read from uninitialized register r0");
  // r1..r5 die at a helper call.
  EXPECT_EQ(verdict({VM_CALL_HELPER(BPF_FUNC_ktime_get_ns), VM_MOV64_REG(0, 1),
                     VM_EXIT()}),
            "PC 1: invalid read from uninitialized register r1");
  // Only one path leaves it uninitialised.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 2, 1, 0), VM_JMP_IMM(BPF_JEQ, 2, 0, 1),
                     VM_MOV64_IMM(0, 1), VM_EXIT()}),
            "PC 3: invalid read from uninitialized register r0");
}

TEST(VerifierRejects, UninitializedStack) {
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 0, 10, -8), VM_EXIT()}),
            "PC 0: invalid read from uninitialized stack at fp-8 (reading "
            "fp-8 size 8)");
  EXPECT_EQ(verdict({VM_ST_MEM(BPF_W, 10, -8, 1), VM_LDX_MEM(BPF_DW, 0, 10, -8),
                     VM_EXIT()}),
            "PC 1: invalid read from uninitialized stack at fp-4 (reading "
            "fp-8 size 8)");
  // A helper reading a key nobody wrote.
  EXPECT_EQ(verdict({VM_MOV64_REG(2, 10), VM_ALU64_IMM(BPF_ADD, 2, -8),
                     VM_LD_MAP(1, 0), VM_CALL_HELPER(BPF_FUNC_map_lookup_elem),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 4: invalid read from uninitialized stack at fp-8 (reading "
            "fp-8 size 8)");
}

TEST(VerifierRejects, StackAccessOutsideTheFrame) {
  EXPECT_EQ(
      verdict({VM_ST_MEM(BPF_DW, 10, -520, 0), VM_MOV64_IMM(0, 0), VM_EXIT()}),
      "PC 0: stack access out of the 512-byte frame: fp-520 size 8");
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(0, 0), VM_STX_MEM(BPF_W, 10, 0, -2), VM_EXIT()}),
      "PC 1: stack access out of the 512-byte frame: fp-2 size 4");
  EXPECT_EQ(verdict({VM_MOV64_REG(1, 10), VM_ALU64_IMM(BPF_ADD, 1, -600),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 1: stack pointer r1 leaves its frame (offset -600)");
}

// --- pointers ----------------------------------------------------------------

TEST(VerifierRejects, PointerArithmeticThatEscapes) {
  // Map value + a number nobody bounded.
  EXPECT_EQ(verdict({LOOKUP_MAP0, VM_JMP_IMM(BPF_JEQ, 0, 0, 3),
                     VM_LDX_MEM(BPF_DW, 1, 0, 0), VM_ALU64_REG(BPF_ADD, 0, 1),
                     VM_LDX_MEM(BPF_B, 0, 0, 0), VM_EXIT()}),
            "PC 8: pointer arithmetic on map_value pointer r0 with unbounded "
            "value (scalar) prohibited");
  EXPECT_EQ(verdict({VM_LD_MAP(1, 0), VM_ALU64_IMM(BPF_ADD, 1, 8),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 2: pointer arithmetic on map pointer r1 prohibited");
  EXPECT_EQ(verdict({LOOKUP_MAP0, VM_ALU64_IMM(BPF_ADD, 0, 8),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 6: pointer arithmetic on possibly NULL map_value_or_null "
            "pointer r0 prohibited; compare it with 0 first");
  EXPECT_EQ(verdict({VM_MOV64_REG(1, 10), VM_ALU32_IMM(BPF_ADD, 1, -8),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 1: 32-bit arithmetic on pointer r1 prohibited");
  EXPECT_EQ(verdict({VM_MOV64_REG(1, 10), VM_ALU64_IMM(BPF_AND, 1, -8),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 1: bitwise and on pointer r1 prohibited");
  EXPECT_EQ(verdict({VM_MOV64_REG(2, 10), VM_ALU64_REG(BPF_SUB, 2, 1),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 1: subtracting pointers into different objects (r2 -= r1) "
            "prohibited");
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 2, 1, 0), VM_ALU64_REG(BPF_ADD, 1, 2),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 1: variable offset added to ctx pointer r1 prohibited");
}

TEST(VerifierRejects, PossiblyNullMapValue) {
  EXPECT_EQ(verdict({LOOKUP_MAP0, VM_LDX_MEM(BPF_DW, 0, 0, 0), VM_EXIT()}),
            "PC 6: possibly NULL pointer r0 (map_value_or_null) dereferenced; "
            "compare it with 0 first");
  // The check on a copy covers the original too, but the wrong branch
  // still holds NULL.
  EXPECT_EQ(verdict({LOOKUP_MAP0, VM_MOV64_REG(6, 0),
                     VM_JMP_IMM(BPF_JNE, 6, 0, 2), VM_LDX_MEM(BPF_DW, 0, 0, 0),
                     VM_EXIT(), VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 8: invalid memory access through r0: it holds scalar 0, not a "
            "pointer");
}

TEST(VerifierRejects, MapValueOutOfBounds) {
  EXPECT_EQ(verdict({LOOKUP_MAP0, VM_JMP_IMM(BPF_JEQ, 0, 0, 1),
                     VM_LDX_MEM(BPF_DW, 0, 0, 12), VM_EXIT()}),
            "PC 7: map 'hash' value access out of bounds: offset 12 size 8, "
            "map 'hash' value is 16 bytes");
  EXPECT_EQ(verdict({LOOKUP_MAP0, VM_JMP_IMM(BPF_JEQ, 0, 0, 1),
                     VM_LDX_MEM(BPF_W, 0, 0, -4), VM_EXIT()}),
            "PC 7: map 'hash' value access out of bounds: offset -4 size 4, "
            "map 'hash' value is 16 bytes");
  // index in [0, 8] bytes: 8 + 8 > 16.
  EXPECT_EQ(verdict({LOOKUP_MAP0, VM_JMP_IMM(BPF_JEQ, 0, 0, 5),
                     VM_LDX_MEM(BPF_DW, 1, 0, 0), VM_ALU64_IMM(BPF_AND, 1, 1),
                     VM_ALU64_IMM(BPF_LSH, 1, 3), VM_ALU64_REG(BPF_ADD, 0, 1),
                     VM_LDX_MEM(BPF_DW, 0, 0, 1), VM_EXIT()}),
            "PC 11: map 'hash' value access out of bounds: offset 1..9 size 8, "
            "map 'hash' value is 16 bytes");
  EXPECT_EQ(verdict({VM_LD_MAP_VALUE(1, 2, 0), VM_ST_MEM(BPF_B, 1, 0, 0),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 2: write into read-only map '.rodata'");
}

TEST(VerifierRejects, ContextAccess) {
  EXPECT_EQ(
      verdict({VM_LDX_MEM(BPF_DW, 0, 1, 64), VM_EXIT()}),
      "PC 0: ctx access out of bounds: offset 64 size 8, ctx is 64 bytes");
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 0, 1, 160), VM_EXIT()}, default_maps(),
                    kPtRegsContext),
            "accepted");
  EXPECT_EQ(
      verdict({VM_ST_MEM(BPF_DW, 1, 0, 0), VM_MOV64_IMM(0, 0), VM_EXIT()}),
      "PC 0: write to the read-only ctx through r1");
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 1), VM_ATOMIC(BPF_DW, BPF_ADD, 1, 0, 0),
                     VM_EXIT()},
                    default_maps(), ContextInfo{64, true}),
            "PC 1: atomic operation on ctx prohibited");
}

TEST(VerifierRejects, ScalarsAreNotPointers) {
  EXPECT_EQ(
      verdict({VM_MOV64_IMM(1, 4096), VM_LDX_MEM(BPF_DW, 0, 1, 0), VM_EXIT()}),
      "PC 1: invalid memory access through r1: it holds scalar 4096, "
      "not a pointer");
  EXPECT_EQ(verdict({VM_LD_MAP(1, 0), VM_LDX_MEM(BPF_DW, 0, 1, 0), VM_EXIT()}),
            "PC 2: invalid memory access through r1: it holds a map reference");
  EXPECT_EQ(verdict({VM_ST_MEM(BPF_DW, 10, -8, 0), VM_MOV64_REG(1, 10),
                     VM_ATOMIC(BPF_DW, BPF_ADD, 10, 1, -8), VM_MOV64_IMM(0, 0),
                     VM_EXIT()}),
            "PC 2: atomic operation with pointer r1 prohibited");
}

// --- helpers
// -------------------------------------------------------------------

TEST(VerifierRejects, HelperCalls) {
  EXPECT_EQ(verdict({VM_CALL_HELPER(999), VM_EXIT()}),
            "PC 0: call to unknown helper 999");
  // A helper left out of the caller's table is unknown too.
  HelperTable only_time({{BPF_FUNC_ktime_get_ns, "ktime_get_ns"}});
  Program p{
      "t", "t", {VM_CALL_HELPER(BPF_FUNC_get_current_pid_tgid), VM_EXIT()}, {}};
  auto r = verify(p, {}, only_time, ContextInfo{64});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "PC 0: call to unknown helper 14");

  EXPECT_EQ(
      verdict({VM_MOV64_IMM(1, 5), VM_MOV64_REG(2, 10),
               VM_CALL_HELPER(BPF_FUNC_map_lookup_elem), VM_EXIT()}),
      "PC 2: helper map_lookup_elem arg1 (r1) expects a map, got scalar 5");
  EXPECT_EQ(verdict({VM_LD_MAP(1, 1), VM_MOV64_REG(2, 10),
                     VM_CALL_HELPER(BPF_FUNC_map_lookup_elem), VM_EXIT()}),
            "PC 3: helper map_lookup_elem arg1 (r1) expects a map, but map "
            "'rb' has type 27");
  EXPECT_EQ(verdict({VM_ST_MEM(BPF_W, 10, -4, 0), VM_MOV64_REG(2, 10),
                     VM_ALU64_IMM(BPF_ADD, 2, -4), VM_LD_MAP(1, 0),
                     VM_CALL_HELPER(BPF_FUNC_map_lookup_elem), VM_EXIT()}),
            "PC 5: stack access out of the 512-byte frame: fp-4 size 8");
  EXPECT_EQ(verdict({VM_LD_MAP(1, 0), VM_MOV64_IMM(2, 0),
                     VM_CALL_HELPER(BPF_FUNC_map_lookup_elem), VM_EXIT()}),
            "PC 3: helper map_lookup_elem arg2 (r2) expects a pointer to a map "
            "key, got scalar 0");
}

TEST(VerifierRejects, HelperSizes) {
  // probe_read(fp-16, size from ctx, src): unbounded.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 2, 1, 0), VM_ALU64_IMM(BPF_RSH, 2, 1),
                     VM_MOV64_REG(1, 10), VM_ALU64_IMM(BPF_ADD, 1, -16),
                     VM_MOV64_IMM(3, 0), VM_CALL_HELPER(BPF_FUNC_probe_read),
                     VM_EXIT()}),
            "PC 5: helper probe_read arg2 (r2) is unbounded (scalar in [0, "
            "9223372036854775807]); bound it with a comparison or a mask");
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 2, 1, 0), VM_MOV64_REG(1, 10),
                     VM_ALU64_IMM(BPF_ADD, 1, -16), VM_MOV64_IMM(3, 0),
                     VM_CALL_HELPER(BPF_FUNC_probe_read), VM_EXIT()}),
            "PC 4: helper probe_read arg2 (r2) may be negative (scalar)");
  // Bounded to 31, but the buffer is 16 bytes.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 2, 1, 0), VM_ALU64_IMM(BPF_AND, 2, 31),
                     VM_MOV64_REG(1, 10), VM_ALU64_IMM(BPF_ADD, 1, -16),
                     VM_MOV64_IMM(3, 0), VM_CALL_HELPER(BPF_FUNC_probe_read),
                     VM_EXIT()}),
            "PC 5: stack access out of the 512-byte frame: fp-16 size 31");
  // probe_read_str needs a size that cannot be 0.
  EXPECT_EQ(verdict({VM_LDX_MEM(BPF_DW, 2, 1, 0), VM_ALU64_IMM(BPF_AND, 2, 15),
                     VM_MOV64_REG(1, 10), VM_ALU64_IMM(BPF_ADD, 1, -16),
                     VM_MOV64_IMM(3, 0),
                     VM_CALL_HELPER(BPF_FUNC_probe_read_str), VM_EXIT()}),
            "PC 5: helper probe_read_str arg2 (r2) may be zero (scalar in [0, "
            "15])");
  EXPECT_EQ(verdict({VM_MOV64_IMM(2, -1), VM_MOV64_REG(1, 10),
                     VM_ALU64_IMM(BPF_ADD, 1, -16), VM_MOV64_IMM(3, 0),
                     VM_CALL_HELPER(BPF_FUNC_probe_read), VM_EXIT()}),
            "PC 4: helper probe_read arg2 (r2) may be negative (scalar -1)");
}

TEST(VerifierRejects, RingbufReferences) {
  //   0: r1 = map[1] ll      ringbuf
  //   2: r2 = 16
  //   3: r3 = 0
  //   4: call ringbuf_reserve
  EXPECT_EQ(verdict({VM_LD_MAP(1, 1), VM_MOV64_IMM(2, 16), VM_MOV64_IMM(3, 0),
                     VM_CALL_HELPER(BPF_FUNC_ringbuf_reserve),
                     VM_MOV64_IMM(0, 0), VM_EXIT()}),
            "PC 6: unreleased reference: the ringbuf_reserve at PC 4 is "
            "neither submitted nor discarded");
  EXPECT_EQ(
      verdict({VM_LD_MAP(1, 1), VM_MOV64_IMM(2, 16), VM_MOV64_IMM(3, 0),
               VM_CALL_HELPER(BPF_FUNC_ringbuf_reserve), VM_MOV64_REG(1, 0),
               VM_MOV64_IMM(2, 0), VM_CALL_HELPER(BPF_FUNC_ringbuf_submit),
               VM_MOV64_IMM(0, 0), VM_EXIT()}),
      "PC 7: helper ringbuf_submit arg1 (r1) is possibly NULL; compare "
      "it with 0 first");
  EXPECT_EQ(
      verdict({VM_LD_MAP(1, 1), VM_MOV64_IMM(2, 16), VM_MOV64_IMM(3, 0),
               VM_CALL_HELPER(BPF_FUNC_ringbuf_reserve),
               VM_JMP_IMM(BPF_JEQ, 0, 0, 1), VM_ST_MEM(BPF_DW, 0, 16, 1),
               VM_MOV64_IMM(0, 0), VM_EXIT()}),
      "PC 6: mem access out of bounds: offset 16 size 8, mem is 16 bytes");
  // The ctx argument must be the ctx itself.
  EXPECT_EQ(
      verdict({VM_ALU64_IMM(BPF_ADD, 1, 8), VM_LD_MAP(2, 1), VM_MOV64_IMM(3, 0),
               VM_MOV64_REG(4, 10), VM_MOV64_IMM(5, 0),
               VM_CALL_HELPER(BPF_FUNC_perf_event_output), VM_EXIT()}),
      "PC 6: helper perf_event_output arg1 (r1) expects the unmodified "
      "ctx pointer, got ctx (offset 8)");
}

// --- loops
// ---------------------------------------------------------------------

TEST(VerifierRejects, InfiniteLoops) {
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_JA(-1), VM_EXIT()}),
            "PC 1: infinite loop: the back-edge to PC 1 comes back to a state "
            "already seen");
  // The counter does not move.
  EXPECT_EQ(verdict({VM_MOV64_IMM(0, 0), VM_MOV64_IMM(2, 1),
                     VM_JMP_IMM(BPF_JLT, 0, 10, -2), VM_EXIT()}),
            "PC 2: infinite loop: the back-edge to PC 1 comes back to a state "
            "already seen");
}

TEST(VerifierRejects, LoopsWithoutAProvableBound) {
  // for (r0 = 0; r0 < ctx[0]; r0++): the bound is not a constant.
  VerifierOptions small;
  small.max_processed_insns = 5000;
  std::string msg = verdict({VM_LDX_MEM(BPF_DW, 1, 1, 0), VM_MOV64_IMM(0, 0),
                             VM_ALU64_IMM(BPF_ADD, 0, 1),
                             VM_JMP_REG(BPF_JLT, 0, 1, -2), VM_EXIT()},
                            default_maps(), ContextInfo{64}, small);
  EXPECT_TRUE(std::regex_match(
      msg, std::regex("PC 3: loop is not provably bounded: the back-edge to PC "
                      "2 was taken [0-9]+ times when the budget of 5000 "
                      "instructions ran out")))
      << msg;
  // A counter compared to a constant, but going the wrong way.
  msg = verdict({VM_MOV64_IMM(0, 0), VM_ALU64_IMM(BPF_SUB, 0, 1),
                 VM_JMP_IMM(BPF_JLT, 0, 100, -2), VM_EXIT()},
                default_maps(), ContextInfo{64}, small);
  EXPECT_EQ(msg, "accepted"); // wraps to 2^64-1 at once: bounded after all
  msg = verdict({VM_MOV64_IMM(0, 0), VM_ALU64_IMM(BPF_SUB, 0, 1),
                 VM_JMP_IMM(BPF_JSLT, 0, 100, -2), VM_EXIT()},
                default_maps(), ContextInfo{64}, small);
  EXPECT_TRUE(std::regex_match(
      msg, std::regex("PC 2: loop is not provably bounded: the back-edge to PC "
                      "1 was taken [0-9]+ times when the budget of 5000 "
                      "instructions ran out")))
      << msg;
}

// --- calls and exits
// -----------------------------------------------------------

TEST(VerifierRejects, ReturnValues) {
  EXPECT_EQ(
      verdict({VM_MOV64_REG(0, 10), VM_EXIT()}),
      "PC 1: the program must return a number in r0, not a stack pointer");
  // A callee may not hand out its own stack.
  EXPECT_EQ(verdict({VM_CALL_REL(1), VM_EXIT(), VM_MOV64_REG(0, 10),
                     VM_ALU64_IMM(BPF_ADD, 0, -8), VM_EXIT()}),
            "PC 4: a function must not return a pointer to its own stack");
  // bpf_loop's callback returns 0 (go on) or 1 (stop).
  //   0: r1 = 4
  //   1: r2 = func pc+6 (PC 7)
  //   3: r3 = 0
  //   4: r4 = 0
  //   5: call loop
  //   6: exit
  //   7: r0 = 2; exit
  EXPECT_EQ(verdict({VM_MOV64_IMM(1, 4), VM_LD_FUNC(2, 5), VM_MOV64_IMM(3, 0),
                     VM_MOV64_IMM(4, 0), VM_CALL_HELPER(BPF_FUNC_loop),
                     VM_EXIT(), VM_MOV64_IMM(0, 2), VM_EXIT()}),
            "PC 8: a callback must return 0 or 1 in r0, not scalar 2");
}

TEST(VerifierRejects, CallStructure) {
  EXPECT_EQ(verdict({VM_CALL_REL(1), VM_EXIT(), VM_CALL_REL(-1), VM_EXIT()}),
            "PC 2: recursive call to the function at PC 2");
  // Nine nested calls: main + 8 callees.
  std::vector<Insn> deep;
  for (int i = 0; i < 9; ++i) {
    deep.push_back(VM_CALL_REL(1));
    deep.push_back(VM_EXIT());
  }
  deep.push_back(VM_MOV64_IMM(0, 0));
  deep.push_back(VM_EXIT());
  EXPECT_EQ(verdict(deep), "PC 14: call stack is too deep: more than 8 frames");
}

} // namespace
} // namespace ubtrace::vm::test
