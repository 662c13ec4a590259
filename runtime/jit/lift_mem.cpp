// LDX, ST, STX: loads (zero- or sign-extending), stores of immediates and
// registers, and the atomic read-modify-write operations. The verifier
// proved every address valid but not aligned, so plain accesses say align 1
// (free on x86-64); atomics must be aligned and are.
#include "runtime/jit/lift_function.h"

namespace ubtrace::jit::detail {
namespace {

unsigned bits_of(uint8_t code) {
  return unsigned(vm::access_bytes(vm::insn_size(code))) * 8;
}

} // namespace

Result<void> FunctionLifter::lift_ldx(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  uint8_t mode = vm::insn_mode(in.code);
  if (mode != BPF_MEM && mode != vm::kModeMemSx)
    return error_at(pc, "unsupported load mode");
  llvm::Type *type = b_.getIntNTy(bits_of(in.code));
  llvm::Value *v =
      b_.CreateAlignedLoad(type, address(in.src, in.off), llvm::MaybeAlign(1));
  set_reg(in.dst, mode == vm::kModeMemSx ? b_.CreateSExt(v, i64_)
                                         : b_.CreateZExt(v, i64_));
  return {};
}

Result<void> FunctionLifter::lift_st(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  if (vm::insn_mode(in.code) != BPF_MEM)
    return error_at(pc, "unsupported store mode");
  llvm::Value *v =
      b_.CreateTrunc(imm64(in.imm), b_.getIntNTy(bits_of(in.code)));
  b_.CreateAlignedStore(v, address(in.dst, in.off), llvm::MaybeAlign(1));
  return {};
}

Result<void> FunctionLifter::lift_stx(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  if (vm::insn_mode(in.code) == BPF_ATOMIC)
    return lift_atomic(pc);
  if (vm::insn_mode(in.code) != BPF_MEM)
    return error_at(pc, "unsupported store mode");
  llvm::Value *v = b_.CreateTrunc(reg(in.src), b_.getIntNTy(bits_of(in.code)));
  b_.CreateAlignedStore(v, address(in.dst, in.off), llvm::MaybeAlign(1));
  return {};
}

// add/or/and/xor (with or without BPF_FETCH), xchg, cmpxchg on 32 or 64
// bits; sequentially consistent like the kernel's. Fetched values are
// zero-extended.
Result<void> FunctionLifter::lift_atomic(uint32_t pc) {
  const vm::Insn &in = scope_.program.insns[pc];
  uint8_t size = vm::insn_size(in.code);
  if (size != BPF_W && size != BPF_DW)
    return error_at(pc, "atomic operation on " +
                            std::to_string(vm::access_bytes(size)) + " bytes");
  unsigned bits = bits_of(in.code);
  llvm::Type *type = b_.getIntNTy(bits);
  llvm::Align align(bits / 8);
  llvm::Value *ptr = address(in.dst, in.off);
  llvm::Value *v = b_.CreateTrunc(reg(in.src), type);
  auto seq_cst = llvm::AtomicOrdering::SequentiallyConsistent;
  if (in.imm == BPF_CMPXCHG) {
    llvm::Value *expected = b_.CreateTrunc(reg(0), type);
    llvm::Value *pair =
        b_.CreateAtomicCmpXchg(ptr, expected, v, align, seq_cst, seq_cst);
    set_reg(0, b_.CreateZExt(b_.CreateExtractValue(pair, 0), i64_));
    return {};
  }
  llvm::AtomicRMWInst::BinOp rmw;
  switch (in.imm & ~BPF_FETCH) {
  case BPF_ADD:
    rmw = llvm::AtomicRMWInst::Add;
    break;
  case BPF_OR:
    rmw = llvm::AtomicRMWInst::Or;
    break;
  case BPF_AND:
    rmw = llvm::AtomicRMWInst::And;
    break;
  case BPF_XOR:
    rmw = llvm::AtomicRMWInst::Xor;
    break;
  case BPF_XCHG & ~BPF_FETCH:
    if (in.imm != BPF_XCHG)
      return error_at(pc, "xchg without BPF_FETCH");
    rmw = llvm::AtomicRMWInst::Xchg;
    break;
  default:
    return error_at(pc, "unknown atomic operation " + std::to_string(in.imm));
  }
  llvm::Value *old = b_.CreateAtomicRMW(rmw, ptr, v, align, seq_cst);
  if (in.imm & BPF_FETCH)
    set_reg(in.src, b_.CreateZExt(old, i64_));
  return {};
}

} // namespace ubtrace::jit::detail
