#include "backends/output/printf_format.h"

#include "backends/output/decode.h"
#include "backends/output/symbols_text.h"
#include "backends/output/text_value.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <optional>
#include <sstream>

namespace ubtrace::output {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Digits as a field width; bpftrace's parse would fail on overflow, we clamp.
int read_number(std::string_view s, size_t &i) {
  long long n = 0;
  while (i < s.size() && is_digit(s[i])) {
    n = std::min<long long>(n * 10 + (s[i] - '0'), 1 << 20);
    ++i;
  }
  return static_cast<int>(n);
}

Conversion::Length length_of(std::string_view l) {
  using L = Conversion::Length;
  if (l.empty())
    return L::None;
  if (l == "hh")
    return L::HH;
  if (l == "h")
    return L::H;
  if (l == "l")
    return L::L;
  if (l == "ll")
    return L::LL;
  if (l == "j")
    return L::J;
  if (l == "z")
    return L::Z;
  if (l == "t")
    return L::T;
  if (l == "L")
    return L::LongDouble;
  return L::None;
}

std::optional<Conversion::Kind> kind_of(std::string_view spec) {
  using K = Conversion::Kind;
  if (spec == "gr")
    return K::GfpFlags;
  if (spec == "rx")
    return K::BufferHex;
  if (spec == "rh")
    return K::BufferRaw;
  if (spec == "r")
    return K::Buffer;
  switch (spec[0]) {
  case 'd':
  case 'i':
    return K::Signed;
  case 'u':
    return K::Unsigned;
  case 'o':
    return K::Octal;
  case 'x':
    return K::Hex;
  case 'X':
    return K::HexUpper;
  case 'c':
    return K::Char;
  case 'p':
    return K::Pointer;
  case 'e':
  case 'E':
  case 'f':
  case 'F':
  case 'g':
  case 'G':
  case 'a':
  case 'A':
    return K::Float;
  default:
    return K::String;
  }
}

// The specifier at s[i], longest alternatives first where bpftrace's
// pattern lists them first ("gr" before "g", "rh"/"rx" before "r").
std::string_view read_specifier(std::string_view s, size_t i) {
  if (i >= s.size())
    return {};
  static constexpr std::string_view singles = "diouxXeEfFGaAcspn%";
  if (singles.find(s[i]) != std::string_view::npos)
    return s.substr(i, 1);
  for (std::string_view multi : {"gr", "g", "rh", "rx", "r"})
    if (s.substr(i, multi.size()) == multi)
      return multi;
  return {};
}

// Tries to read a conversion starting at the '%' at s[start]. On success
// sets `end` past it. Flags come in a fixed order: - + space # 0.
std::optional<Conversion> read_conversion(std::string_view s, size_t start,
                                          size_t &end) {
  Conversion c;
  size_t i = start + 1;
  auto flag = [&](char f) {
    if (i < s.size() && s[i] == f) {
      ++i;
      return true;
    }
    return false;
  };
  c.left = flag('-');
  c.plus = flag('+');
  c.space = flag(' ');
  c.alternate = flag('#');
  c.zero = flag('0');
  if (!flag('*'))
    c.width = read_number(s, i);
  if (i + 1 < s.size() && s[i] == '.' &&
      (s[i + 1] == '*' || is_digit(s[i + 1]))) {
    ++i;
    if (!flag('*'))
      c.precision = read_number(s, i);
  }
  size_t length_start = i;
  while (i < s.size() && s[i] != '\0' && std::strchr("hlLjzt", s[i]))
    ++i;
  std::string_view length = s.substr(length_start, i - length_start);
  std::string_view spec = read_specifier(s, i);
  if (spec.empty())
    return std::nullopt;
  end = i + spec.size();
  c.specifier = std::string(spec);
  c.kind = *kind_of(spec);
  c.length = length_of(length);
  return c;
}

// The integer a numeric conversion reads, as its 64 bits.
std::optional<uint64_t> number_bits(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Int:
    return static_cast<uint64_t>(v.sint);
  case Value::Kind::UInt:
    return v.uint;
  case Value::Kind::Bool:
    return v.boolean ? 1 : 0;
  case Value::Kind::Symbolic:
    return v.signed_number ? static_cast<uint64_t>(v.sint) : v.uint;
  case Value::Kind::None:
  case Value::Kind::String:
  case Value::Kind::Buffer:
  case Value::Kind::Array:
  case Value::Kind::Tuple:
  case Value::Kind::Record:
    return std::nullopt;
  }
  return std::nullopt;
}

// The value narrowed to the conversion's length, as C casts do.
int64_t narrowed_signed(uint64_t bits, Conversion::Length l) {
  using L = Conversion::Length;
  switch (l) {
  case L::HH:
    return static_cast<int8_t>(bits);
  case L::H:
    return static_cast<int16_t>(bits);
  case L::L:
  case L::LL:
  case L::J:
  case L::Z:
  case L::T:
    return static_cast<int64_t>(bits);
  case L::None:
  case L::LongDouble:
    return static_cast<int32_t>(bits);
  }
  return static_cast<int32_t>(bits);
}

uint64_t narrowed_unsigned(uint64_t bits, Conversion::Length l) {
  using L = Conversion::Length;
  switch (l) {
  case L::HH:
    return static_cast<uint8_t>(bits);
  case L::H:
    return static_cast<uint16_t>(bits);
  case L::L:
  case L::LL:
  case L::J:
  case L::Z:
  case L::T:
    return bits;
  case L::None:
  case L::LongDouble:
    return static_cast<uint32_t>(bits);
  }
  return static_cast<uint32_t>(bits);
}

// Digits in the conversion's base; '#' adds the base prefix, which a
// stream's showbase leaves off zero.
std::string unsigned_digits(uint64_t v, const Conversion &c) {
  const char *fmt = "%llu";
  const char *prefix = "";
  if (c.kind == Conversion::Kind::Octal) {
    fmt = "%llo";
    prefix = "0";
  } else if (c.kind == Conversion::Kind::Hex) {
    fmt = "%llx";
    prefix = "0x";
  } else if (c.kind == Conversion::Kind::HexUpper) {
    fmt = "%llX";
    prefix = "0X";
  }
  char digits[32];
  std::snprintf(digits, sizeof(digits), fmt,
                static_cast<unsigned long long>(v));
  if (c.alternate && v != 0)
    return prefix + std::string(digits);
  return digits;
}

std::string float_text(const Conversion &c, uint64_t bits, bool is_signed) {
  std::ostringstream ss;
  ss << (c.left ? std::left : std::right);
  if (c.width > 0)
    ss << std::setw(c.width);
  if (c.zero)
    ss << std::setfill('0');
  if (c.precision >= 0) {
    ss << std::setprecision(c.precision);
    char f = c.specifier[0];
    if (f == 'f' || f == 'F')
      ss << std::fixed;
    else if (f == 'e' || f == 'E')
      ss << std::scientific;
  }
  if (c.alternate)
    ss << std::showbase;
  if (c.plus)
    ss << std::showpos;
  long double v = is_signed
                      ? static_cast<long double>(static_cast<int64_t>(bits))
                      : static_cast<long double>(bits);
  if (c.length == Conversion::Length::LongDouble)
    ss << v;
  else
    ss << static_cast<double>(v);
  return ss.str();
}

std::string invalid(const Value &v) {
  return "!{invalid integer conversion: " + text_of(v) + "}";
}

} // namespace

ParsedFormat ParsedFormat::parse(std::string_view s) {
  ParsedFormat f;
  std::string literal;
  size_t i = 0;
  while (i < s.size()) {
    size_t pct = s.find('%', i);
    if (pct == std::string_view::npos) {
      literal.append(s.substr(i));
      break;
    }
    literal.append(s.substr(i, pct - i));
    size_t end = 0;
    auto c = read_conversion(s, pct, end);
    if (!c) {
      literal += '%';
      i = pct + 1;
      continue;
    }
    i = end;
    if (c->specifier == "%") {
      literal += '%';
      continue;
    }
    f.literals_.push_back(std::move(literal));
    literal.clear();
    f.conversions_.push_back(std::move(*c));
  }
  f.literals_.push_back(std::move(literal));
  return f;
}

std::string gfp_flags_text(uint64_t flags) {
  // The bits of linux/gfp_types.h (Linux 6.10 and later: bit 9 unused).
  constexpr uint64_t DMA = 1u << 0, HIGHMEM = 1u << 1, DMA32 = 1u << 2,
                     MOVABLE = 1u << 3, RECLAIMABLE = 1u << 4, HIGH = 1u << 5,
                     IO = 1u << 6, FS = 1u << 7, ZERO = 1u << 8,
                     DIRECT_RECLAIM = 1u << 10, KSWAPD_RECLAIM = 1u << 11,
                     WRITE = 1u << 12, NOWARN = 1u << 13,
                     RETRY_MAYFAIL = 1u << 14, NOFAIL = 1u << 15,
                     NORETRY = 1u << 16, MEMALLOC = 1u << 17, COMP = 1u << 18,
                     NOMEMALLOC = 1u << 19, HARDWALL = 1u << 20,
                     THISNODE = 1u << 21, ACCOUNT = 1u << 22,
                     ZEROTAGS = 1u << 23, SKIP_ZERO = 1u << 24,
                     SKIP_KASAN = 1u << 25, NO_OBJ_EXT = 1u << 26;
  constexpr uint64_t RECLAIM = DIRECT_RECLAIM | KSWAPD_RECLAIM;
  constexpr uint64_t KERNEL = RECLAIM | IO | FS;
  constexpr uint64_t NOIO = RECLAIM;
  constexpr uint64_t NOFS = RECLAIM | IO;
  constexpr uint64_t USER = KERNEL | HARDWALL;
  constexpr uint64_t HIGHUSER = USER | HIGHMEM;
  constexpr uint64_t HIGHUSER_MOVABLE = HIGHUSER | MOVABLE | SKIP_KASAN;
  constexpr uint64_t TRANSHUGE_LIGHT =
      (HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NOWARN) & ~RECLAIM;
  // The kernel's trace output order: compound names first, so that they
  // take their bits before the single flags do.
  static constexpr std::pair<uint64_t, std::string_view> names[] = {
      {TRANSHUGE_LIGHT | DIRECT_RECLAIM, "GFP_TRANSHUGE"},
      {TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"},
      {HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"},
      {HIGHUSER, "GFP_HIGHUSER"},
      {USER, "GFP_USER"},
      {KERNEL | ACCOUNT, "GFP_KERNEL_ACCOUNT"},
      {KERNEL, "GFP_KERNEL"},
      {NOFS, "GFP_NOFS"},
      {HIGH | KSWAPD_RECLAIM, "GFP_ATOMIC"},
      {NOIO, "GFP_NOIO"},
      {KSWAPD_RECLAIM | NOWARN, "GFP_NOWAIT"},
      {DMA, "GFP_DMA"},
      {HIGHMEM, "__GFP_HIGHMEM"},
      {DMA32, "GFP_DMA32"},
      {HIGH, "__GFP_HIGH"},
      {IO, "__GFP_IO"},
      {FS, "__GFP_FS"},
      {ZERO, "__GFP_ZERO"},
      {DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"},
      {KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM"},
      {WRITE, "__GFP_WRITE"},
      {NOWARN, "__GFP_NOWARN"},
      {RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL"},
      {NOFAIL, "__GFP_NOFAIL"},
      {NORETRY, "__GFP_NORETRY"},
      {MEMALLOC, "__GFP_MEMALLOC"},
      {COMP, "__GFP_COMP"},
      {NOMEMALLOC, "__GFP_NOMEMALLOC"},
      {HARDWALL, "__GFP_HARDWALL"},
      {THISNODE, "__GFP_THISNODE"},
      {RECLAIMABLE, "__GFP_RECLAIMABLE"},
      {MOVABLE, "__GFP_MOVABLE"},
      {ACCOUNT, "__GFP_ACCOUNT"},
      {ZEROTAGS, "__GFP_ZEROTAGS"},
      {SKIP_ZERO, "__GFP_SKIP_ZERO"},
      {SKIP_KASAN, "__GFP_SKIP_KASAN"},
      {NO_OBJ_EXT, "__GFP_NO_OBJ_EXT"},
  };
  if (flags == 0)
    return "0";
  std::string out;
  uint64_t left = flags;
  for (const auto &[mask, name] : names) {
    if ((left & mask) != mask)
      continue;
    out += (out.empty() ? "" : "|") + std::string(name);
    left &= ~mask;
  }
  if (left) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%llx",
                  static_cast<unsigned long long>(left));
    out += (out.empty() ? "" : "|") + std::string(hex);
  }
  return out;
}

std::string format_conversion(const Conversion &c, const Value &v) {
  TextSink sink;
  sink.width = c.width > 0 ? static_cast<size_t>(c.width) : 0;
  sink.fill = c.zero ? '0' : ' ';
  sink.left = c.left;
  using K = Conversion::Kind;
  switch (c.kind) {
  case K::Signed: {
    auto bits = number_bits(v);
    if (!bits)
      return invalid(v);
    int64_t n = narrowed_signed(*bits, c.length);
    sink.write((c.plus && n >= 0 ? "+" : "") + std::to_string(n));
    return std::move(sink.out);
  }
  case K::Unsigned:
  case K::Octal:
  case K::Hex:
  case K::HexUpper: {
    auto bits = number_bits(v);
    if (!bits)
      return invalid(v);
    sink.write(unsigned_digits(narrowed_unsigned(*bits, c.length), c));
    return std::move(sink.out);
  }
  case K::Char: {
    auto bits = number_bits(v);
    if (!bits)
      return invalid(v);
    sink.write(std::string(1, static_cast<char>(*bits)));
    return std::move(sink.out);
  }
  case K::Pointer: {
    auto bits = number_bits(v);
    if (!bits)
      return invalid(v);
    sink.write(pointer_text(*bits));
    return std::move(sink.out);
  }
  case K::Float: {
    auto bits = number_bits(v);
    if (!bits)
      return invalid(v);
    bool is_signed = v.kind == Value::Kind::Int ||
                     (v.kind == Value::Kind::Symbolic && v.signed_number);
    return float_text(c, *bits, is_signed);
  }
  case K::GfpFlags: {
    auto bits = number_bits(v);
    if (!bits)
      return invalid(v);
    sink.write(gfp_flags_text(*bits));
    return std::move(sink.out);
  }
  case K::Buffer:
  case K::BufferHex:
  case K::BufferRaw:
    if (v.kind == Value::Kind::Buffer) {
      sink.write(
          buffer_text(v.text, c.kind == K::Buffer, c.kind != K::BufferRaw));
      return std::move(sink.out);
    }
    [[fallthrough]];
  case K::String:
    sink.showpos = c.plus;
    write_text(sink, v);
    return std::move(sink.out);
  }
  return std::move(sink.out);
}

std::string ParsedFormat::format(std::span<const Value> args) const {
  std::string out = literals_[0];
  for (size_t i = 0; i < conversions_.size(); ++i) {
    if (i < args.size())
      out += format_conversion(conversions_[i], args[i]);
    out += literals_[i + 1];
  }
  return out;
}

std::string ParsedFormat::format(const runtime::FormatSpec &spec, Bytes args,
                                 const FormatContext &ctx) const {
  std::vector<Value> values;
  values.reserve(spec.args.size());
  for (const auto &a : spec.args)
    values.push_back(decode(a.type, slice(args, a.offset, a.type.size), ctx));
  return format(values);
}

} // namespace ubtrace::output
