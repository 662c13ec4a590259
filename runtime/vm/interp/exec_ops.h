// One function per instruction class, each executing one instruction on the
// register file. Kept inline so the dispatch loop compiles to one switch
// per class. Memory is accessed with memcpy: the verifier proved the
// addresses valid, but not aligned.
#pragma once

#include "runtime/vm/insn.h"

#include <cstring>

namespace ubtrace::vm::interp {

#define UBT_INLINE [[gnu::always_inline]] inline

template <class T> UBT_INLINE T load(uint64_t addr) {
  T v;
  memcpy(&v, reinterpret_cast<const void *>(addr), sizeof(T));
  return v;
}

template <class T> UBT_INLINE void store(uint64_t addr, T v) {
  memcpy(reinterpret_cast<void *>(addr), &v, sizeof(T));
}

UBT_INLINE uint64_t sign_extend(uint64_t v, int bits) {
  int shift = 64 - bits;
  return uint64_t(int64_t(v << shift) >> shift);
}

UBT_INLINE uint64_t swap_bytes(uint64_t v, int32_t bits) {
  switch (bits) {
  case 16:
    return __builtin_bswap16(uint16_t(v));
  case 32:
    return __builtin_bswap32(uint32_t(v));
  default:
    return __builtin_bswap64(v);
  }
}

UBT_INLINE uint64_t truncate_to(uint64_t v, int32_t bits) {
  return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1);
}

UBT_INLINE void exec_alu64(uint8_t code, const Insn &in, uint64_t *regs) {
  uint64_t src =
      insn_source(code) == BPF_X ? regs[in.src] : uint64_t(int64_t(in.imm));
  uint64_t &dst = regs[in.dst];
  switch (insn_op(code)) {
  case BPF_ADD:
    dst += src;
    return;
  case BPF_SUB:
    dst -= src;
    return;
  case BPF_MUL:
    dst *= src;
    return;
  case BPF_DIV:
    if (in.off == kOffSigned)
      dst = src == 0             ? 0
            : int64_t(src) == -1 ? 0 - dst
                                 : uint64_t(int64_t(dst) / int64_t(src));
    else
      dst = src ? dst / src : 0;
    return;
  case BPF_MOD:
    if (in.off == kOffSigned)
      dst = src == 0             ? dst
            : int64_t(src) == -1 ? 0
                                 : uint64_t(int64_t(dst) % int64_t(src));
    else
      dst = src ? dst % src : dst;
    return;
  case BPF_OR:
    dst |= src;
    return;
  case BPF_AND:
    dst &= src;
    return;
  case BPF_XOR:
    dst ^= src;
    return;
  case BPF_LSH:
    dst <<= (src & 63);
    return;
  case BPF_RSH:
    dst >>= (src & 63);
    return;
  case BPF_ARSH:
    dst = uint64_t(int64_t(dst) >> (src & 63));
    return;
  case BPF_MOV:
    dst = in.off ? sign_extend(src, in.off) : src;
    return;
  case BPF_NEG:
    dst = 0 - dst;
    return;
  case BPF_END: // ALU64 class: unconditional byte swap (v4)
    dst = swap_bytes(dst, in.imm);
    return;
  }
}

UBT_INLINE void exec_alu32(uint8_t code, const Insn &in, uint64_t *regs) {
  uint32_t src =
      insn_source(code) == BPF_X ? uint32_t(regs[in.src]) : uint32_t(in.imm);
  uint32_t dst = uint32_t(regs[in.dst]);
  switch (insn_op(code)) {
  case BPF_ADD:
    dst += src;
    break;
  case BPF_SUB:
    dst -= src;
    break;
  case BPF_MUL:
    dst *= src;
    break;
  case BPF_DIV:
    if (in.off == kOffSigned)
      dst = src == 0             ? 0
            : int32_t(src) == -1 ? 0 - dst
                                 : uint32_t(int32_t(dst) / int32_t(src));
    else
      dst = src ? dst / src : 0;
    break;
  case BPF_MOD:
    if (in.off == kOffSigned)
      dst = src == 0             ? dst
            : int32_t(src) == -1 ? 0
                                 : uint32_t(int32_t(dst) % int32_t(src));
    else
      dst = src ? dst % src : dst;
    break;
  case BPF_OR:
    dst |= src;
    break;
  case BPF_AND:
    dst &= src;
    break;
  case BPF_XOR:
    dst ^= src;
    break;
  case BPF_LSH:
    dst <<= (src & 31);
    break;
  case BPF_RSH:
    dst >>= (src & 31);
    break;
  case BPF_ARSH:
    dst = uint32_t(int32_t(dst) >> (src & 31));
    break;
  case BPF_MOV:
    dst = in.off ? uint32_t(sign_extend(src, in.off)) : src;
    break;
  case BPF_NEG:
    dst = 0 - dst;
    break;
  case BPF_END: {
    // to_le is a truncation on this little-endian host; to_be swaps.
    uint64_t v = regs[in.dst];
    regs[in.dst] = insn_source(code) == BPF_X ? swap_bytes(v, in.imm)
                                              : truncate_to(v, in.imm);
    return;
  }
  }
  regs[in.dst] = dst;
}

UBT_INLINE void exec_ldx(uint8_t code, const Insn &in, uint64_t *regs) {
  uint64_t addr = regs[in.src] + uint64_t(int64_t(in.off));
  bool sx = insn_mode(code) == kModeMemSx;
  uint64_t v = 0;
  switch (insn_size(code)) {
  case BPF_B:
    v = sx ? uint64_t(int64_t(load<int8_t>(addr))) : load<uint8_t>(addr);
    break;
  case BPF_H:
    v = sx ? uint64_t(int64_t(load<int16_t>(addr))) : load<uint16_t>(addr);
    break;
  case BPF_W:
    v = sx ? uint64_t(int64_t(load<int32_t>(addr))) : load<uint32_t>(addr);
    break;
  case BPF_DW:
    v = load<uint64_t>(addr);
    break;
  }
  regs[in.dst] = v;
}

UBT_INLINE void store_sized(uint8_t size, uint64_t addr, uint64_t v) {
  switch (size) {
  case BPF_B:
    store<uint8_t>(addr, uint8_t(v));
    return;
  case BPF_H:
    store<uint16_t>(addr, uint16_t(v));
    return;
  case BPF_W:
    store<uint32_t>(addr, uint32_t(v));
    return;
  case BPF_DW:
    store<uint64_t>(addr, v);
    return;
  }
}

UBT_INLINE void exec_st(uint8_t code, const Insn &in, uint64_t *regs) {
  store_sized(insn_size(code), regs[in.dst] + uint64_t(int64_t(in.off)),
              uint64_t(int64_t(in.imm)));
}

template <class T> UBT_INLINE void exec_atomic(const Insn &in, uint64_t *regs) {
  T *p = reinterpret_cast<T *>(regs[in.dst] + uint64_t(int64_t(in.off)));
  T v = T(regs[in.src]);
  T old = 0;
  switch (in.imm & ~BPF_FETCH) {
  case BPF_ADD:
    old = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    break;
  case BPF_OR:
    old = __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    break;
  case BPF_AND:
    old = __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    break;
  case BPF_XOR:
    old = __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
    break;
  case BPF_XCHG & ~BPF_FETCH:
    old = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
    break;
  case BPF_CMPXCHG & ~BPF_FETCH: {
    T expected = T(regs[0]);
    __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    regs[0] = uint64_t(expected); // the old value, zero-extended
    return;
  }
  }
  if (in.imm & BPF_FETCH)
    regs[in.src] = uint64_t(old);
}

UBT_INLINE void exec_stx(uint8_t code, const Insn &in, uint64_t *regs) {
  if (insn_mode(code) == BPF_ATOMIC) {
    if (insn_size(code) == BPF_W)
      exec_atomic<uint32_t>(in, regs);
    else
      exec_atomic<uint64_t>(in, regs);
    return;
  }
  store_sized(insn_size(code), regs[in.dst] + uint64_t(int64_t(in.off)),
              regs[in.src]);
}

// Conditional or unconditional jump: the next pc.
template <class U, class S> UBT_INLINE bool condition(uint8_t op, U a, U b) {
  switch (op) {
  case BPF_JEQ:
    return a == b;
  case BPF_JNE:
    return a != b;
  case BPF_JGT:
    return a > b;
  case BPF_JGE:
    return a >= b;
  case BPF_JLT:
    return a < b;
  case BPF_JLE:
    return a <= b;
  case BPF_JSGT:
    return S(a) > S(b);
  case BPF_JSGE:
    return S(a) >= S(b);
  case BPF_JSLT:
    return S(a) < S(b);
  case BPF_JSLE:
    return S(a) <= S(b);
  case BPF_JSET:
    return (a & b) != 0;
  }
  return false;
}

UBT_INLINE uint32_t exec_jmp(uint8_t code, const Insn &in, const uint64_t *regs,
                             uint32_t pc) {
  uint8_t op = insn_op(code);
  if (op == BPF_JA)
    return uint32_t(int64_t(pc) + 1 + in.off);
  uint64_t src =
      insn_source(code) == BPF_X ? regs[in.src] : uint64_t(int64_t(in.imm));
  bool taken = condition<uint64_t, int64_t>(op, regs[in.dst], src);
  return taken ? uint32_t(int64_t(pc) + 1 + in.off) : pc + 1;
}

UBT_INLINE uint32_t exec_jmp32(uint8_t code, const Insn &in,
                               const uint64_t *regs, uint32_t pc) {
  uint8_t op = insn_op(code);
  if (op == BPF_JA) // gotol: the offset is in imm
    return uint32_t(int64_t(pc) + 1 + in.imm);
  uint32_t src =
      insn_source(code) == BPF_X ? uint32_t(regs[in.src]) : uint32_t(in.imm);
  bool taken = condition<uint32_t, int32_t>(op, uint32_t(regs[in.dst]), src);
  return taken ? uint32_t(int64_t(pc) + 1 + in.off) : pc + 1;
}

#undef UBT_INLINE

} // namespace ubtrace::vm::interp
