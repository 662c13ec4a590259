// ld_imm64: plain constants, map references (the map's handle), direct map
// value addresses (global data) and callback references (the address of the
// callback's lifted function). Legacy LD_ABS/LD_IND never pass the verifier.
#include "runtime/jit/lift_function.h"

namespace ubtrace::jit::detail {

Result<void> FunctionLifter::lift_ld(uint32_t pc) {
  const auto &insns = scope_.program.insns;
  const vm::Insn &lo = insns[pc];
  if (!vm::is_ld_imm64(lo) || pc + 1 >= info_.end)
    return error_at(pc, "unsupported BPF_LD instruction");
  const vm::Insn &hi = insns[pc + 1];
  auto map = [&]() -> const MapConstants * {
    if (lo.imm < 0 || size_t(lo.imm) >= scope_.maps.size())
      return nullptr;
    return &scope_.maps[size_t(lo.imm)];
  };
  switch (lo.src) {
  case 0:
    set_reg(lo.dst, b_.getInt64(vm::ld_imm64_value(lo, hi)));
    return {};
  case BPF_PSEUDO_MAP_FD:
    if (!map())
      return error_at(pc,
                      "map " + std::to_string(lo.imm) + " has no constants");
    set_reg(lo.dst, b_.getInt64(map()->handle));
    return {};
  case BPF_PSEUDO_MAP_VALUE:
    if (!map() || map()->value_base == 0)
      return error_at(pc, "map " + std::to_string(lo.imm) +
                              " has no direct value address");
    set_reg(lo.dst, b_.getInt64(map()->value_base + uint32_t(hi.imm)));
    return {};
  case BPF_PSEUDO_FUNC: {
    llvm::Function *callee = function_at(uint32_t(int64_t(pc) + 1 + lo.imm));
    if (!callee)
      return error_at(pc, "callback reference to a pc that starts no function");
    set_reg(lo.dst, b_.CreatePtrToInt(callee, i64_));
    return {};
  }
  }
  return error_at(pc,
                  "ld_imm64 with unsupported src " + std::to_string(lo.src));
}

} // namespace ubtrace::jit::detail
