#include "runtime/symbols/usdt_args.h"

#include "runtime/symbols/elf_symbols.h"

#include <cctype>
#include <charconv>

namespace ubtrace::runtime::symbols {
namespace {

void trim(std::string_view &s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
}

// A whole integer: decimal, or hex with 0x, optionally negative.
bool parse_int(std::string_view s, int64_t &out) {
  trim(s);
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t magnitude = 0;
  auto [p, ec] =
      std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty())
    return false;
  out = negative ? static_cast<int64_t>(0 - magnitude)
                 : static_cast<int64_t>(magnitude);
  return true;
}

bool is_symbol_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '@';
}

// "counter", "counter+8", "counter-4", "16", "-16", "" into a symbol and a
// numeric addend.
bool parse_displacement(std::string_view s, std::string &symbol,
                        int64_t &addend) {
  trim(s);
  symbol.clear();
  addend = 0;
  if (s.empty())
    return true;
  if (parse_int(s, addend))
    return true;
  // symbol[(+|-)number]: the sign that splits is the last one after the
  // first character.
  size_t split = s.find_last_of("+-");
  std::string_view name = s, number;
  if (split != std::string_view::npos && split > 0) {
    name = s.substr(0, split);
    number = s.substr(split);
    if (!parse_int(number, addend))
      return false;
  }
  trim(name);
  if (name.empty())
    return false;
  for (char c : name)
    if (!is_symbol_char(c))
      return false;
  symbol = std::string(name);
  return true;
}

Result<RegisterOperand> parse_register_token(std::string_view s,
                                             std::string_view spec) {
  trim(s);
  if (!s.starts_with('%'))
    return make_error("usdt: expected a register in '" + std::string(spec) +
                      "'");
  auto reg = parse_x86_register(s.substr(1));
  if (!reg)
    return make_error("usdt: unknown register '" + std::string(s) + "' in '" +
                      std::string(spec) + "'");
  return *reg;
}

} // namespace

std::string_view usdt_arg_kind_name(UsdtArg::Kind kind) {
  switch (kind) {
  case UsdtArg::Kind::Constant:
    return "constant";
  case UsdtArg::Kind::Register:
    return "register";
  case UsdtArg::Kind::Memory:
    return "memory";
  case UsdtArg::Kind::Unavailable:
    return "unavailable";
  }
  return "?";
}

Result<UsdtArg> parse_usdt_arg(std::string_view spec) {
  trim(spec);
  UsdtArg arg;
  arg.text = std::string(spec);
  const std::string text = arg.text;
  std::string_view operand = spec;

  // "[-]N[f]@operand"; without '@' (older notes) the size follows the
  // operand (register width, else 8).
  bool sized = false;
  if (auto at = spec.find('@'); at != std::string_view::npos) {
    std::string_view size = spec.substr(0, at);
    operand = spec.substr(at + 1);
    if (size.ends_with('f')) {
      arg.is_float = true;
      size.remove_suffix(1);
    }
    int64_t n = 0;
    if (!parse_int(size, n))
      return make_error("usdt: bad argument size in '" + text + "'");
    arg.is_signed = n < 0;
    n = n < 0 ? -n : n;
    if (n != 1 && n != 2 && n != 4 && n != 8)
      return make_error("usdt: bad argument size in '" + text + "'");
    arg.size = static_cast<uint8_t>(n);
    sized = true;
  }
  trim(operand);
  if (operand.empty())
    return make_error("usdt: empty argument in '" + text + "'");

  if (operand.front() == '$') {
    if (!parse_int(operand.substr(1), arg.constant)) {
      // "$symbol": the address of a symbol, rare; not readable here.
      arg.kind = UsdtArg::Kind::Unavailable;
      arg.error =
          "usdt: immediate '" + std::string(operand) + "' is not a number";
      return arg;
    }
    arg.kind = UsdtArg::Kind::Constant;
    return arg;
  }

  if (operand.front() == '%') {
    auto name = operand.substr(1);
    if (name.starts_with("xmm") || name.starts_with("ymm") ||
        name.starts_with("st")) {
      arg.kind = UsdtArg::Kind::Unavailable;
      arg.error =
          "usdt: register '" + std::string(operand) + "' is not in pt_regs";
      return arg;
    }
    auto reg = parse_register_token(operand, text);
    if (!reg)
      return std::move(reg).take_error();
    arg.kind = UsdtArg::Kind::Register;
    arg.reg = *reg;
    if (!sized)
      arg.size = reg->width;
    return arg;
  }

  // Memory: "disp(base,index,scale)", "(base)", "disp" alone.
  std::string_view disp = operand, inside;
  bool has_parens = false;
  if (auto open = operand.find('('); open != std::string_view::npos) {
    if (!operand.ends_with(')'))
      return make_error("usdt: unbalanced parenthesis in '" + text + "'");
    disp = operand.substr(0, open);
    inside = operand.substr(open + 1, operand.size() - open - 2);
    has_parens = true;
  }
  if (!parse_displacement(disp, arg.symbol, arg.displacement))
    return make_error("usdt: bad displacement in '" + text + "'");
  if (has_parens) {
    std::string_view parts[3];
    int count = 0;
    while (count < 3) {
      auto comma = inside.find(',');
      parts[count++] = inside.substr(0, comma);
      if (comma == std::string_view::npos)
        break;
      inside.remove_prefix(comma + 1);
      if (count == 3)
        return make_error("usdt: bad memory operand '" + text + "'");
    }
    trim(parts[0]);
    if (!parts[0].empty()) {
      auto base = parse_register_token(parts[0], text);
      if (!base)
        return std::move(base).take_error();
      arg.reg = *base;
      arg.has_base = true;
    }
    if (count >= 2) {
      auto index = parse_register_token(parts[1], text);
      if (!index)
        return std::move(index).take_error();
      arg.index = *index;
      int64_t scale = 1;
      if (count == 3 && !parse_int(parts[2], scale))
        return make_error("usdt: bad scale in '" + text + "'");
      if (scale != 1 && scale != 2 && scale != 4 && scale != 8)
        return make_error("usdt: bad scale in '" + text + "'");
      arg.scale = static_cast<uint8_t>(scale);
    }
  }
  arg.kind = UsdtArg::Kind::Memory;
  if (!sized)
    arg.size = 8;
  return arg;
}

Result<std::vector<UsdtArg>> parse_usdt_args(std::string_view specs) {
  std::vector<UsdtArg> args;
  size_t i = 0;
  while (i < specs.size()) {
    while (i < specs.size() &&
           std::isspace(static_cast<unsigned char>(specs[i])))
      ++i;
    if (i >= specs.size())
      break;
    size_t start = i;
    int depth = 0;
    // Blanks separate specs, except inside a memory operand's parentheses.
    while (i < specs.size() &&
           (depth > 0 || !std::isspace(static_cast<unsigned char>(specs[i])))) {
      if (specs[i] == '(')
        ++depth;
      else if (specs[i] == ')')
        --depth;
      ++i;
    }
    auto arg = parse_usdt_arg(specs.substr(start, i - start));
    if (!arg)
      return std::move(arg).take_error();
    args.push_back(std::move(*arg));
  }
  return args;
}

void resolve_usdt_arg_symbols(std::vector<UsdtArg> &args, uint64_t site_vaddr,
                              bool is_exec, const SymbolTable *symbols) {
  for (UsdtArg &arg : args) {
    if (arg.kind != UsdtArg::Kind::Memory)
      continue;
    bool rip_based = arg.has_base && arg.reg.reg == X86Register::Rip;
    if (arg.symbol.empty()) {
      // An absolute address is link-time; in a non-PIE executable that is
      // also the run-time address, elsewhere it cannot be right.
      if (!arg.has_base && !arg.index && !is_exec) {
        arg.kind = UsdtArg::Kind::Unavailable;
        arg.error = "usdt: absolute address in a position-independent "
                    "binary: '" +
                    arg.text + "'";
      }
      continue;
    }
    if (arg.index || (arg.has_base && !rip_based)) {
      arg.kind = UsdtArg::Kind::Unavailable;
      arg.error = "usdt: symbol with a register base: '" + arg.text + "'";
      continue;
    }
    if (!arg.has_base && !is_exec) {
      arg.kind = UsdtArg::Kind::Unavailable;
      arg.error = "usdt: absolute symbol address in a position-independent "
                  "binary: '" +
                  arg.text + "'";
      continue;
    }
    const ElfSymbol *sym =
        symbols ? symbols->object_named(arg.symbol) : nullptr;
    if (!sym) {
      arg.kind = UsdtArg::Kind::Unavailable;
      arg.error = "usdt: symbol '" + arg.symbol + "' of argument '" + arg.text +
                  "' is not in the symbol table";
      continue;
    }
    arg.has_base = true;
    arg.reg = RegisterOperand{X86Register::Rip, 8, false};
    arg.displacement =
        static_cast<int64_t>(sym->vaddr - site_vaddr) + arg.displacement;
    arg.symbol_resolved = true;
  }
}

} // namespace ubtrace::runtime::symbols
