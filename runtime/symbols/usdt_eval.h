// Reads a decoded USDT argument from a register frame and memory: the
// reference semantics of UsdtArg (codegen emits the same steps as BPF).
// Used by tests against a stopped process, and usable by an interpreter.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/usdt_args.h"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ubtrace::runtime::symbols {

struct UsdtArgSource {
  // The register frame: 21 u64 slots in pt_regs order (x86_registers.h).
  const uint64_t *pt_regs = nullptr;
  // Copies `size` bytes at `addr` of the probed process; false on a fault.
  std::function<bool(uint64_t addr, void *out, size_t size)> read_memory;
};

// The argument's value, truncated to its size and sign- or zero-extended.
Result<uint64_t> read_usdt_arg(const UsdtArg &arg, const UsdtArgSource &src);

// Truncates `value` to `size` bytes and extends it back to 64 bits.
uint64_t extend_to_64(uint64_t value, uint8_t size, bool is_signed);

} // namespace ubtrace::runtime::symbols
