// USDT argument specs (the SystemTap v3 note's argument string, e.g.
// "-4@%edi 8@-16(%rbp) 8@%rax 4@$5 -4@counter(%rip)") decoded into what
// codegen turns into reads of pt_regs and memory:
//
//   Constant  value = constant
//   Register  value = reg (its low `width` bytes, or bits 8..15 for %ah)
//   Memory    value = *(size bytes *)(base + index * scale + displacement)
//
// then truncated to `size` bytes and sign- or zero-extended to 64 bits by
// `is_signed`. A symbol operand ("counter(%rip)", or "counter" in a non-PIE
// executable) is resolved against the binary's symbols and rewritten as
// rip-relative from the probe site: at the probe, pt_regs.rip is the site's
// runtime address, so base Rip + displacement (symbol - site) lands on the
// symbol wherever the binary is loaded.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/x86_registers.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::symbols {

class SymbolTable;

struct UsdtArg {
  enum class Kind : uint8_t {
    Constant,
    Register,
    Memory,
    Unavailable, // cannot be read at run time; `error` says why
  };

  Kind kind = Kind::Unavailable;
  uint8_t size = 8; // bytes: 1, 2, 4 or 8
  bool is_signed = false;
  bool is_float = false; // "8f@": the bits of a double (read as an integer)
  int64_t constant = 0;  // Constant
  // Register: the register read. Memory: the base register, if has_base.
  RegisterOperand reg;
  bool has_base = false;
  std::optional<RegisterOperand> index; // Memory: (base, index, scale)
  uint8_t scale = 1;
  int64_t displacement = 0;
  // A symbol the operand named ("counter" in "counter+8(%rip)"); its
  // address is folded into `displacement` once resolved.
  std::string symbol;
  bool symbol_resolved = false;
  std::string text;  // the spec as written in the note
  std::string error; // Unavailable: the reason
};

// One spec ("-4@-20(%rbp)"). Fails on text that is not an argument spec;
// a spec that parses but cannot be read (an %xmm register) is Unavailable.
Result<UsdtArg> parse_usdt_arg(std::string_view spec);
// The note's whole argument string, specs separated by blanks.
Result<std::vector<UsdtArg>> parse_usdt_args(std::string_view specs);

// Folds symbol operands of the site at `site_vaddr` into rip-relative
// memory reads (see above); `is_exec` tells a non-PIE executable (where an
// operand without a base is an absolute link-time address). Operands naming
// a symbol the table lacks (".LC0", or any in a stripped binary) become
// Unavailable.
void resolve_usdt_arg_symbols(std::vector<UsdtArg> &args, uint64_t site_vaddr,
                              bool is_exec, const SymbolTable *symbols);

std::string_view usdt_arg_kind_name(UsdtArg::Kind kind);

} // namespace ubtrace::runtime::symbols
