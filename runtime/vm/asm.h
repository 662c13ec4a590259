// Instruction builders for hand-assembled programs (tests, the program
// generator, the JIT's tests). Each macro is one brace initialiser of an Insn;
// VM_LD_IMM64 and friends expand to two, as a wide instruction takes two slots.
// Usage: `std::vector<Insn> prog = {VM_MOV64_IMM(0, 1), VM_EXIT()};`
#pragma once

#include "runtime/vm/insn.h"

#define VM_INSN(CODE, DST, SRC, OFF, IMM)                                      \
  ::ubtrace::vm::Insn {                                                        \
    static_cast<uint8_t>(CODE), static_cast<uint8_t>(DST),                     \
        static_cast<uint8_t>(SRC), static_cast<int16_t>(OFF),                  \
        static_cast<int32_t>(IMM)                                              \
  }

// ALU: dst op= src / dst op= imm, 64 and 32 bits.
#define VM_ALU64_REG(OP, DST, SRC)                                             \
  VM_INSN(BPF_ALU64 | (OP) | BPF_X, DST, SRC, 0, 0)
#define VM_ALU64_IMM(OP, DST, IMM)                                             \
  VM_INSN(BPF_ALU64 | (OP) | BPF_K, DST, 0, 0, IMM)
#define VM_ALU32_REG(OP, DST, SRC)                                             \
  VM_INSN(BPF_ALU | (OP) | BPF_X, DST, SRC, 0, 0)
#define VM_ALU32_IMM(OP, DST, IMM)                                             \
  VM_INSN(BPF_ALU | (OP) | BPF_K, DST, 0, 0, IMM)
#define VM_MOV64_REG(DST, SRC) VM_ALU64_REG(BPF_MOV, DST, SRC)
#define VM_MOV64_IMM(DST, IMM) VM_ALU64_IMM(BPF_MOV, DST, IMM)
#define VM_MOV32_REG(DST, SRC) VM_ALU32_REG(BPF_MOV, DST, SRC)
#define VM_MOV32_IMM(DST, IMM) VM_ALU32_IMM(BPF_MOV, DST, IMM)
// v4: sign-extending moves (BITS = 8, 16, 32) and signed div/mod.
#define VM_MOVSX64_REG(DST, SRC, BITS)                                         \
  VM_INSN(BPF_ALU64 | BPF_MOV | BPF_X, DST, SRC, BITS, 0)
#define VM_MOVSX32_REG(DST, SRC, BITS)                                         \
  VM_INSN(BPF_ALU | BPF_MOV | BPF_X, DST, SRC, BITS, 0)
#define VM_SDIV64_REG(DST, SRC)                                                \
  VM_INSN(BPF_ALU64 | BPF_DIV | BPF_X, DST, SRC, 1, 0)
#define VM_SMOD64_REG(DST, SRC)                                                \
  VM_INSN(BPF_ALU64 | BPF_MOD | BPF_X, DST, SRC, 1, 0)
#define VM_NEG64(DST) VM_INSN(BPF_ALU64 | BPF_NEG, DST, 0, 0, 0)
#define VM_NEG32(DST) VM_INSN(BPF_ALU | BPF_NEG, DST, 0, 0, 0)
// Byte swaps: to little/big endian (ALU class), unconditional bswap (v4).
#define VM_ENDIAN(SRCBIT, DST, BITS)                                           \
  VM_INSN(BPF_ALU | BPF_END | (SRCBIT), DST, 0, 0, BITS)
#define VM_BSWAP(DST, BITS) VM_INSN(BPF_ALU64 | BPF_END, DST, 0, 0, BITS)

// Wide instructions (two slots).
#define VM_LD_IMM64_RAW(DST, SRC, LO, HI)                                      \
  VM_INSN(BPF_LD | BPF_DW | BPF_IMM, DST, SRC, 0, LO), VM_INSN(0, 0, 0, 0, HI)
#define VM_LD_IMM64(DST, IMM)                                                  \
  VM_LD_IMM64_RAW(DST, 0, static_cast<uint32_t>(static_cast<uint64_t>(IMM)),   \
                  static_cast<uint32_t>(static_cast<uint64_t>(IMM) >> 32))
#define VM_LD_MAP(DST, MAP_INDEX)                                              \
  VM_LD_IMM64_RAW(DST, BPF_PSEUDO_MAP_FD, MAP_INDEX, 0)
#define VM_LD_MAP_VALUE(DST, MAP_INDEX, OFF)                                   \
  VM_LD_IMM64_RAW(DST, BPF_PSEUDO_MAP_VALUE, MAP_INDEX, OFF)
// Callback reference: REL is relative to the next instruction, as for calls.
#define VM_LD_FUNC(DST, REL) VM_LD_IMM64_RAW(DST, BPF_PSEUDO_FUNC, REL, 0)

// Memory.
#define VM_LDX_MEM(SIZE, DST, SRC, OFF)                                        \
  VM_INSN(BPF_LDX | BPF_MEM | (SIZE), DST, SRC, OFF, 0)
#define VM_LDX_MEMSX(SIZE, DST, SRC, OFF)                                      \
  VM_INSN(BPF_LDX | ::ubtrace::vm::kModeMemSx | (SIZE), DST, SRC, OFF, 0)
#define VM_STX_MEM(SIZE, DST, SRC, OFF)                                        \
  VM_INSN(BPF_STX | BPF_MEM | (SIZE), DST, SRC, OFF, 0)
#define VM_ST_MEM(SIZE, DST, OFF, IMM)                                         \
  VM_INSN(BPF_ST | BPF_MEM | (SIZE), DST, 0, OFF, IMM)
#define VM_ATOMIC(SIZE, OP, DST, SRC, OFF)                                     \
  VM_INSN(BPF_STX | BPF_ATOMIC | (SIZE), DST, SRC, OFF, OP)

// Control flow.
#define VM_JMP_REG(OP, DST, SRC, OFF)                                          \
  VM_INSN(BPF_JMP | (OP) | BPF_X, DST, SRC, OFF, 0)
#define VM_JMP_IMM(OP, DST, IMM, OFF)                                          \
  VM_INSN(BPF_JMP | (OP) | BPF_K, DST, 0, OFF, IMM)
#define VM_JMP32_REG(OP, DST, SRC, OFF)                                        \
  VM_INSN(BPF_JMP32 | (OP) | BPF_X, DST, SRC, OFF, 0)
#define VM_JMP32_IMM(OP, DST, IMM, OFF)                                        \
  VM_INSN(BPF_JMP32 | (OP) | BPF_K, DST, 0, OFF, IMM)
#define VM_JA(OFF) VM_INSN(BPF_JMP | BPF_JA, 0, 0, OFF, 0)
#define VM_CALL_HELPER(ID) VM_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, ID)
#define VM_CALL_REL(REL) VM_INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, REL)
#define VM_EXIT() VM_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
