// LD: only the wide ld_imm64 survives in modern eBPF. Its source field says
// what the 64 bits are: a number, a map, a map value, or a callback.
#include "runtime/vm/verifier/engine.h"

namespace ubtrace::vm::verifier {

Result<Step> check_ld_imm64(Engine &engine, State &state, const Insn &in) {
  uint32_t pc = state.pc;
  const Insn &hi = engine.insn(pc + 1);
  Reg &dst = state.reg(in.dst);
  switch (in.src) {
  case BPF_PSEUDO_MAP_FD:
    dst = Reg::pointer(RegKind::MapPtr);
    dst.map = uint32_t(in.imm);
    break;
  case BPF_PSEUDO_MAP_VALUE:
    dst = Reg::pointer(RegKind::MapValue);
    dst.map = uint32_t(in.imm);
    dst.off = hi.imm;
    break;
  case BPF_PSEUDO_FUNC:
    dst = Reg::pointer(RegKind::Func);
    dst.map = uint32_t(int64_t(pc) + 1 + in.imm);
    break;
  default:
    dst = Reg::scalar(Scalar::constant(ld_imm64_value(in, hi)));
    break;
  }
  state.pc += 2;
  return Step::Continue;
}

} // namespace ubtrace::vm::verifier
