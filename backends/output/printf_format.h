// printf() formatting as bpftrace 0.26 does it. bpftrace formats each
// conversion through a C++ stream, not printf(3), and its results differ
// from C's where the two disagree:
//   - precision applies to floating-point conversions only ("%.3s" prints
//     the whole string, "%.3d" the plain number);
//   - '0' pads before the sign and the base prefix ("%05d" of -5 is
//     "000-5", "%#06x" of 255 is "000xff"), and after the value when
//     combined with '-' ("%-05d" of 5 is "50000");
//   - ' ' is accepted and ignored; '+' marks only signed conversions and
//     signed values printed with %s;
//   - a width pads only the first piece of a composite value printed with
//     %s ("%6s" of (1, 2) is "     (1, 2)");
//   - flags are recognised only in the order - + space # 0; a '%' that does
//     not start a valid conversion is printed as is.
// %d/%i/%u/%o/%x/%X narrow to int unless a length modifier (hh h l ll j z t)
// says otherwise; %c prints one byte; %p prints "0x..." ("0" for null);
// %s prints any value as text; %r/%rx/%rh print buf() bytes (other values
// as %s). A value a numeric conversion cannot take prints
// "!{invalid integer conversion: VALUE}".
#pragma once

#include "backends/output/bytes.h"
#include "backends/output/context.h"
#include "backends/output/value.h"
#include "runtime/bundle.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::output {

struct Conversion {
  enum class Kind : uint8_t {
    Signed,    // d i
    Unsigned,  // u
    Octal,     // o
    Hex,       // x
    HexUpper,  // X
    Char,      // c
    String,    // s, and anything else bpftrace prints as a string (n)
    Buffer,    // r
    BufferHex, // rx: every byte \xNN
    BufferRaw, // rh: "NN NN"
    Pointer,   // p
    Float,     // f F e E g G a A
    GfpFlags,  // gr: kernel GFP flags by name (gfp_flags_text)
  };
  // Length modifiers as bpftrace tells them apart: any other run of
  // h l L j z t counts as none (except L for floats).
  enum class Length : uint8_t { None, HH, H, L, LL, J, Z, T, LongDouble };

  Kind kind = Kind::String;
  Length length = Length::None;
  bool left = false;      // -
  bool plus = false;      // +
  bool space = false;     // ' ' (ignored, as in bpftrace)
  bool alternate = false; // #
  bool zero = false;      // 0
  int width = 0;          // '*' is accepted and means none
  int precision = -1;
  std::string specifier; // as written: "d", "llu" has "u", "rx"
};

// A format parsed once and applied to many argument lists.
class ParsedFormat {
public:
  static ParsedFormat parse(std::string_view format);

  // literals.size() == conversions.size() + 1; "%%" is already "%".
  const std::vector<std::string> &literals() const { return literals_; }
  const std::vector<Conversion> &conversions() const { return conversions_; }

  // Formats `args` (one per conversion; missing ones format nothing,
  // extra ones are ignored).
  std::string format(std::span<const Value> args) const;

  // Decodes the arguments of `spec` from the packed `args` bytes (each at
  // its field's offset) and formats them.
  std::string format(const runtime::FormatSpec &spec, Bytes args,
                     const FormatContext &ctx) const;

private:
  std::vector<std::string> literals_;
  std::vector<Conversion> conversions_;
};

// One conversion applied to one value.
std::string format_conversion(const Conversion &c, const Value &v);

// %gr: kernel GFP allocation flags as the kernel's trace output names them
// ("GFP_KERNEL|__GFP_ZERO"): compound names first, bits left over in hex;
// the bit layout of Linux 6.10 and later (linux/gfp_types.h).
std::string gfp_flags_text(uint64_t flags);

} // namespace ubtrace::output
