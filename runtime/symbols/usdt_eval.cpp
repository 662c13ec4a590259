#include "runtime/symbols/usdt_eval.h"

namespace ubtrace::runtime::symbols {
namespace {

uint64_t register_value(const RegisterOperand &op, const uint64_t *regs) {
  uint64_t v = regs[pt_regs_offset(op.reg) / 8];
  if (op.high_byte)
    v >>= 8;
  return extend_to_64(v, op.width, false);
}

} // namespace

uint64_t extend_to_64(uint64_t value, uint8_t size, bool is_signed) {
  if (size >= 8)
    return value;
  const unsigned bits = size * 8u;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  value &= mask;
  if (is_signed && (value >> (bits - 1)) & 1)
    value |= ~mask;
  return value;
}

Result<uint64_t> read_usdt_arg(const UsdtArg &arg, const UsdtArgSource &src) {
  switch (arg.kind) {
  case UsdtArg::Kind::Constant:
    return extend_to_64(static_cast<uint64_t>(arg.constant), arg.size,
                        arg.is_signed);
  case UsdtArg::Kind::Register:
    return extend_to_64(register_value(arg.reg, src.pt_regs), arg.size,
                        arg.is_signed);
  case UsdtArg::Kind::Memory: {
    uint64_t addr = static_cast<uint64_t>(arg.displacement);
    if (arg.has_base)
      addr += register_value(arg.reg, src.pt_regs);
    if (arg.index)
      addr += register_value(*arg.index, src.pt_regs) * arg.scale;
    uint64_t value = 0;
    if (!src.read_memory || !src.read_memory(addr, &value, arg.size))
      return make_error("usdt: cannot read argument '" + arg.text + "'");
    return extend_to_64(value, arg.size, arg.is_signed);
  }
  case UsdtArg::Kind::Unavailable:
    return make_error(arg.error);
  }
  return make_error("usdt: bad argument kind");
}

} // namespace ubtrace::runtime::symbols
