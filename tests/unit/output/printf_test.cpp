// printf() formatting as bpftrace 0.26 does it (through C++ streams).
// Where 0.26 differs from 0.17 (which used printf(3)), 0.26 wins:
//   "%.2s" of "abcdef": 0.17 "ab", 0.26 "abcdef" (precision ignored)
//   "%05d" of -5:       0.17 "-0005", 0.26 "000-5"
//   "%-05d" of 5:       0.17 "5    ", 0.26 "50000"
//   "% d":              0.17 rejects the space flag, 0.26 ignores it
//   "%s" of a tuple:    0.17 rejects it, 0.26 prints the tuple
#include "backends/output/printf_format.h"
#include "tests/unit/output/helpers.h"

#include <gtest/gtest.h>
#include <iomanip>
#include <random>
#include <sstream>

namespace ubtrace::output::test {
namespace {

std::string fmt(std::string_view format, std::vector<Value> args) {
  return ParsedFormat::parse(format).format(args);
}

Value I(int64_t v) {
  return Value::of_int(v);
}
Value U(uint64_t v) {
  return Value::of_uint(v);
}
Value S(std::string s) {
  return Value::of_string(std::move(s));
}

TEST(PrintfParse, SegmentsAndConversions) {
  auto f = ParsedFormat::parse("a%db%-08.3llxc%%d%");
  ASSERT_EQ(f.conversions().size(), 2u);
  ASSERT_EQ(f.literals().size(), 3u);
  EXPECT_EQ(f.literals()[0], "a");
  EXPECT_EQ(f.literals()[1], "b");
  EXPECT_EQ(f.literals()[2], "c%d%");
  const Conversion &c = f.conversions()[1];
  EXPECT_TRUE(c.left);
  EXPECT_TRUE(c.zero);
  EXPECT_EQ(c.width, 8);
  EXPECT_EQ(c.precision, 3);
  EXPECT_EQ(c.length, Conversion::Length::LL);
  EXPECT_EQ(c.kind, Conversion::Kind::Hex);
  EXPECT_EQ(c.specifier, "x");
}

TEST(PrintfParse, BpftraceSpecificSpecifiers) {
  auto f = ParsedFormat::parse("%r %rx %rh %gr %s %n %p %c %i %E");
  std::vector<Conversion::Kind> kinds;
  for (const auto &c : f.conversions())
    kinds.push_back(c.kind);
  using K = Conversion::Kind;
  EXPECT_EQ(kinds, (std::vector<K>{K::Buffer, K::BufferHex, K::BufferRaw,
                                   K::GfpFlags, K::String, K::String,
                                   K::Pointer, K::Char, K::Signed, K::Float}));
}

TEST(PrintfParse, WhatIsNotAConversionStaysText) {
  // Flags only in the order - + space # 0; "%+-d" is not a conversion.
  EXPECT_EQ(ParsedFormat::parse("%+-d %y %5.d %").conversions().size(), 0u);
  EXPECT_EQ(fmt("%+-d %y %5.d %", {}), "%+-d %y %5.d %");
  // "%-%" is an escaped percent, flags and all.
  EXPECT_EQ(fmt("100%-%", {}), "100%");
  // '*' widths are accepted and mean no width.
  auto f = ParsedFormat::parse("%*d|%.*d");
  ASSERT_EQ(f.conversions().size(), 2u);
  EXPECT_EQ(f.format(std::vector<Value>{I(5), I(6)}), "5|6");
}

TEST(Printf, BpftraceRuntimeExamples) {
  // From bpftrace's tests/runtime/call.
  EXPECT_EQ(fmt("value: %dms100\n", {I(100)}), "value: 100ms100\n");
  const int64_t x = 0x12345678abcdef;
  EXPECT_EQ(fmt("%hhx %hx %x %jx", {I(x), I(x), I(x), I(x)}),
            "ef cdef 78abcdef 12345678abcdef");
  EXPECT_EQ(fmt("%c%c%c%c", {I(0x41), I(0x42), I(0x43), I(0x44)}), "ABCD");
  EXPECT_EQ(fmt("%5s %04x", {S("ba"), I(2)}), "   ba 0002");
  EXPECT_EQ(fmt("%dst: %sa; %dnd: %sb;;", {I(1), S("a"), I(2), S("ab")}),
            "1st: aa; 2nd: abb;;");
  Value a = Value::of_symbolic("A", 0), b = Value::of_symbolic("B", 1),
        c = Value::of_symbolic("C", 2);
  EXPECT_EQ(fmt("%-5s %5s %s", {a, b, c}), "A         B C");
  EXPECT_EQ(fmt("%d %s",
                {Value::of_symbolic("ONE", 1), Value::of_symbolic("ONE", 1)}),
            "1 ONE");
  EXPECT_EQ(fmt("0x%x -- 0x%x", {I(0x55555555), I(0x33333333)}),
            "0x55555555 -- 0x33333333");
}

TEST(Printf, IntegersNarrowToTheLengthModifier) {
  EXPECT_EQ(fmt("%d", {I(5000000000)}), "705032704");
  EXPECT_EQ(fmt("%ld %lld %jd %zd %td",
                {I(5000000000), I(-5000000000), I(1), I(2), I(3)}),
            "5000000000 -5000000000 1 2 3");
  EXPECT_EQ(fmt("%hd %hhd %hhu %hu", {I(70000), I(200), I(300), I(-1)}),
            "4464 -56 44 65535");
  EXPECT_EQ(fmt("%u %lu", {I(-1), I(-1)}), "4294967295 18446744073709551615");
  EXPECT_EQ(fmt("%x %lx %X %o", {I(-1), I(-1), I(255), I(8)}),
            "ffffffff ffffffffffffffff FF 10");
  // Unrecognised length runs count as none.
  EXPECT_EQ(fmt("%lllu %Ld", {I(-1), I(5000000000)}), "4294967295 705032704");
  EXPECT_EQ(fmt("%d %d", {Value::of_bool(true), U(7)}), "1 7");
}

TEST(Printf, StreamStylePadding) {
  EXPECT_EQ(fmt("[%5d][%-5d][%05d]", {I(42), I(42), I(42)}),
            "[   42][42   ][00042]");
  EXPECT_EQ(
      fmt("[%05d][%-05d][%+d][%+5d][% d]", {I(-5), I(5), I(5), I(5), I(5)}),
      "[000-5][50000][+5][   +5][5]");
  EXPECT_EQ(
      fmt("[%#x][%#X][%#o][%#x][%#08x]", {I(255), I(255), I(8), I(0), I(255)}),
      "[0xff][0XFF][010][0][00000xff]");
  EXPECT_EQ(fmt("[%+u][%.3d][%.2s]", {I(5), I(7), S("abcdef")}),
            "[5][7][abcdef]");
  EXPECT_EQ(fmt("[%-10s][%10s][%010s]", {S("abc"), S("abc"), S("abc")}),
            "[abc       ][       abc][0000000abc]");
  EXPECT_EQ(fmt("[%3c][%-3c]", {I('x'), I('y')}), "[  x][y  ]");
}

TEST(Printf, PointersAndChars) {
  EXPECT_EQ(fmt("%p %p %20p", {U(0x7fff1234), U(0), U(0xabc)}),
            "0x7fff1234 0                0xabc");
  EXPECT_EQ(fmt("%p", {Value::of_symbolic("0x10", 0x10)}), "0x10");
  // %c writes the byte, NUL included.
  EXPECT_EQ(fmt("%c", {I(0)}), std::string(1, '\0'));
  EXPECT_EQ(fmt("%c", {I(0x141)}), "A");
}

TEST(Printf, StringConversionPrintsAnyValue) {
  Value tuple = Value::of_tuple({I(1), S("x")});
  EXPECT_EQ(fmt("%s|%s|%s", {tuple, I(-3), Value::of_bool(false)}),
            "(1, x)|-3|false");
  // The width pads the first piece written: the tuple's "(".
  EXPECT_EQ(fmt("[%6s]", {tuple}), "[     (1, x)]");
  EXPECT_EQ(fmt("[%-3s]", {Value::of_array({I(1), I(2)})}), "[[  1,2]]");
  // '+' marks signed integers anywhere in the value.
  EXPECT_EQ(fmt("%+s", {Value::of_tuple({I(1), U(2), I(-3)})}), "(+1, 2, -3)");
  Value rec = Value::of_record({"a"}, {I(1)});
  EXPECT_EQ(fmt("%s", {rec}), "{ .a = 1 }");
}

TEST(Printf, Buffers) {
  Value buf = Value::of_buffer(std::string("Hello\0", 6));
  EXPECT_EQ(fmt("%r", {buf}), "Hello\\x00");
  EXPECT_EQ(fmt("%rx", {buf}), "\\x48\\x65\\x6c\\x6c\\x6f\\x00");
  EXPECT_EQ(fmt("%rh", {buf}), "48 65 6c 6c 6f 00");
  EXPECT_EQ(fmt("%s", {buf}), "Hello\\x00");
  EXPECT_EQ(fmt("[%12r]", {buf}), "[   Hello\\x00]");
  // %r of something else prints it as %s.
  EXPECT_EQ(fmt("%r", {S("plain")}), "plain");
}

TEST(Printf, ValuesANumberCannotTake) {
  EXPECT_EQ(fmt("a %d b", {S("xyz")}),
            "a !{invalid integer conversion: xyz} b");
  EXPECT_EQ(fmt("%x", {Value::of_tuple({I(1)})}),
            "!{invalid integer conversion: (1)}");
}

TEST(Printf, FloatConversionsOfIntegers) {
  EXPECT_EQ(fmt("%f|%.2f|%e|%.1e|%g", {I(3), I(3), I(1234), I(1234), I(5)}),
            "3|3.00|1234|1.2e+03|5");
}

TEST(Printf, ArgumentsDecodedFromPackedBytes) {
  runtime::FormatSpec spec;
  spec.format = "%s is %d years, %x\n";
  spec.args.push_back({"", 0, string_type(8)});
  spec.args.push_back({"", 8, int_type(4, true)});
  spec.args.push_back({"", 12, simple_type(Kind::Pointer, 8)});
  auto bytes = Packer().str("bob", 8).put(8, 0xfffffffe, 4).put(12, 0xbeef);
  auto parsed = ParsedFormat::parse(spec.format);
  EXPECT_EQ(parsed.format(spec, bytes.span(), FormatContext{}),
            "bob is -2 years, beef\n");
}

TEST(Printf, MissingArgumentsFormatNothing) {
  EXPECT_EQ(fmt("a%db%dc", {I(1)}), "a1bc");
}

// The mechanism bpftrace 0.26 uses, written out with the stream
// manipulators it sets, to compare against on many combinations.
std::string stream_reference(bool left, bool plus, bool alt, bool zero,
                             int width, char spec, int64_t v) {
  std::stringstream ss;
  ss << (left ? std::left : std::right);
  if (width > 0)
    ss << std::setw(width);
  if (zero)
    ss << std::setfill('0');
  if (spec == 'o')
    ss << std::oct;
  else if (spec == 'x')
    ss << std::hex << std::nouppercase;
  else if (spec == 'X')
    ss << std::hex << std::uppercase;
  if (alt)
    ss << std::showbase;
  if (plus)
    ss << std::showpos;
  switch (spec) {
  case 'd':
    ss << static_cast<long long>(static_cast<int>(v));
    break;
  case 'u':
  case 'o':
  case 'x':
  case 'X':
    ss << static_cast<unsigned long>(static_cast<unsigned int>(v));
    break;
  case 'c':
    ss << static_cast<char>(static_cast<int>(v));
    break;
  case 'p':
    ss << reinterpret_cast<void *>(static_cast<unsigned long long>(v));
    break;
  case 's':
    ss << v;
    break;
  }
  return ss.str();
}

TEST(Printf, MatchesStreamFormattingOnManyCombinations) {
  std::mt19937_64 rng(12345);
  const int64_t interesting[] = {0,  1,   -1,         42,        -42,      255,
                                 65, 100, 0x7fffffff, INT64_MIN, 1ll << 40};
  int checked = 0;
  for (char spec : std::string("duoxXcps")) {
    for (int flags = 0; flags < 16; ++flags) {
      for (int width : {0, 1, 5, 12}) {
        for (int64_t v : interesting) {
          int64_t value = v ^ static_cast<int64_t>(rng() & 0x3);
          if (spec == 'c' && (value & 0xff) == 0)
            continue;
          bool left = flags & 1, plus = flags & 2, alt = flags & 4,
               zero = flags & 8;
          std::string f = "%";
          if (left)
            f += '-';
          if (plus)
            f += '+';
          if (alt)
            f += '#';
          if (zero)
            f += '0';
          if (width)
            f += std::to_string(width);
          f += spec;
          std::string expected =
              stream_reference(left, plus, alt, zero, width, spec, value);
          EXPECT_EQ(fmt(f, {I(value)}), expected) << f << " of " << value;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

} // namespace
} // namespace ubtrace::output::test
