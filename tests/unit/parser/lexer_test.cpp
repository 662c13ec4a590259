// The lexer: integer and string literals, comments, shebang lines,
// positional parameters, and the errors on malformed tokens.
#include "ast/int_literal.h"
#include "tests/unit/parser/frontend_support.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <optional>

namespace ubtrace::test {
namespace {

// The value of the integer literal `text` as the parser reads it in
// `$x = TEXT;`, or nothing when the literal does not parse.
std::optional<ast::Integer> literal(const std::string &text) {
  Frontend f = parse_only("BEGIN { $x = " + text + "; }");
  if (!f.parsed)
    return std::nullopt;
  auto *assign =
      ast::dyn_cast<ast::AssignVar>(f.ctx->root->probes[0]->body->stmts[0]);
  auto *i = ast::dyn_cast<ast::Integer>(assign->value);
  if (!i)
    return std::nullopt;
  return *i;
}

uint64_t value_of(const std::string &text) {
  auto i = literal(text);
  EXPECT_TRUE(i.has_value()) << text << ":\n"
                             << parse_tree("BEGIN { $x = " + text + "; }");
  return i ? i->value : ~0ull;
}

// The first diagnostic's message for `$x = TEXT;`.
std::string literal_error(const std::string &text) {
  Frontend f = parse_only("BEGIN { $x = " + text + "; }");
  if (f.ctx->diags().all().empty())
    return "(no error)";
  return f.ctx->diags().all().front().message;
}

TEST(LexerIntegers, Decimal) {
  EXPECT_EQ(value_of("0"), 0u);
  EXPECT_EQ(value_of("42"), 42u);
  EXPECT_EQ(value_of("9223372036854775807"), 9223372036854775807ull);
  EXPECT_EQ(value_of("18446744073709551615"), UINT64_MAX);
}

TEST(LexerIntegers, Hexadecimal) {
  EXPECT_EQ(value_of("0x1F"), 0x1Fu);
  EXPECT_EQ(value_of("0XfF"), 0xFFu);
  EXPECT_EQ(value_of("0xdeadBEEF"), 0xdeadbeefu);
  EXPECT_EQ(value_of("0xFFFFFFFFFFFFFFFF"), UINT64_MAX);
  // A 'd' is a hex digit, not the days suffix.
  EXPECT_EQ(value_of("0x1d"), 0x1du);
}

TEST(LexerIntegers, OctalAsInBpftrace) {
  EXPECT_EQ(value_of("017"), 017u);
  EXPECT_EQ(value_of("0777"), 0777u);
  EXPECT_EQ(value_of("00"), 0u);
  // A leading zero before 8 or 9 does not make an octal literal.
  EXPECT_EQ(value_of("08"), 8u);
  EXPECT_EQ(value_of("09"), 9u);
}

TEST(LexerIntegers, UnderscoreSeparators) {
  EXPECT_EQ(value_of("1_000_000"), 1000000u);
  EXPECT_EQ(value_of("1__2"), 12u);
  EXPECT_EQ(value_of("0xFF_FF"), 0xFFFFu);
  EXPECT_EQ(value_of("0x_10"), 0x10u);
}

TEST(LexerIntegers, Scientific) {
  EXPECT_EQ(value_of("1e3"), 1000u);
  EXPECT_EQ(value_of("5E2"), 500u);
  EXPECT_EQ(value_of("9e18"), 9000000000000000000ull);
  EXPECT_EQ(value_of("1e1_0"), 10000000000ull);
}

TEST(LexerIntegers, DurationSuffixesScaleToNanoseconds) {
  EXPECT_EQ(value_of("7ns"), 7u);
  EXPECT_EQ(value_of("7us"), 7000u);
  EXPECT_EQ(value_of("7ms"), 7000000u);
  EXPECT_EQ(value_of("7s"), 7000000000u);
  EXPECT_EQ(value_of("7m"), 420000000000u);
  EXPECT_EQ(value_of("7h"), 25200000000000u);
  EXPECT_EQ(value_of("7d"), 604800000000000u);
  EXPECT_EQ(value_of("1_000ms"), 1000000000u);
  EXPECT_EQ(value_of("2e3us"), 2000000u);
}

TEST(LexerIntegers, CSuffixesAreIgnored) {
  for (const char *text :
       {"10u", "10U", "10ul", "10UL", "10ull", "10ULL", "10l", "10L", "10ll",
        "10LL", "10lu", "10llu", "10uL"})
    EXPECT_EQ(value_of(text), 10u) << text;
  EXPECT_EQ(value_of("0xFFu"), 0xFFu);
  EXPECT_EQ(value_of("0x10UL"), 0x10u);
}

TEST(LexerIntegers, NegativeLiteralsFoldIntoTheInteger) {
  auto i = literal("-5");
  ASSERT_TRUE(i);
  EXPECT_TRUE(i->negative);
  EXPECT_EQ(i->value, 5u);
  EXPECT_EQ(i->as_signed(), -5);
  auto min = literal("-9223372036854775808");
  ASSERT_TRUE(min);
  EXPECT_EQ(min->as_signed(), INT64_MIN);
  // -0 is plain 0.
  auto zero = literal("-0");
  ASSERT_TRUE(zero);
  EXPECT_FALSE(zero->negative);
}

TEST(LexerIntegers, Errors) {
  EXPECT_EQ(literal_error("1_"), "trailing underscore in integer literal");
  EXPECT_EQ(literal_error("1_000_"), "trailing underscore in integer literal");
  EXPECT_EQ(literal_error("1_ms"), "trailing underscore in integer literal");
  EXPECT_EQ(literal_error("10e2"),
            "coefficient part of scientific literal must be 1-9: 10e2");
  EXPECT_EQ(literal_error("1e20"),
            "overflow error, maximum value is 18446744073709551615: 1e20");
  EXPECT_EQ(literal_error("18446744073709551616"),
            "overflow error, maximum value is 18446744073709551615: "
            "18446744073709551616");
  EXPECT_EQ(literal_error("0x10000000000000000"),
            "overflow error, maximum value is 18446744073709551615: "
            "0x10000000000000000");
  EXPECT_EQ(literal_error("5000000000u"),
            "overflow error, maximum value is 4294967295: 5000000000u");
  EXPECT_EQ(literal_error("9223372036854775808ll"),
            "overflow error, maximum value is 9223372036854775807: "
            "9223372036854775808ll");
  EXPECT_EQ(literal_error("20000000000000000000ns"),
            "overflow error, maximum value is 18446744073709551615: "
            "20000000000000000000ns");
  EXPECT_EQ(literal_error("1000000d"),
            "overflow error, maximum value is 18446744073709551615: 1000000d");
  EXPECT_EQ(literal_error("0778"), "invalid trailing bytes: 0778");
  EXPECT_EQ(literal_error("0x10ms"), "invalid integer suffix 'ms'");
  EXPECT_EQ(literal_error("10mss"), "invalid integer suffix 'mss'");
  EXPECT_EQ(literal_error("12abc"), "invalid integer suffix 'abc'");
  EXPECT_EQ(literal_error("0x"), "invalid integer suffix 'x'");
  EXPECT_EQ(literal_error("0b101"), "invalid integer suffix 'b101'");
}

TEST(LexerIntegers, ErrorIsLocatedOnTheLiteral) {
  EXPECT_EQ(
      parse_tree("BEGIN { $x = 1 + 5000000000u; }"),
      R"(stdin:1:18-29: ERROR: overflow error, maximum value is 4294967295: 5000000000u
BEGIN { $x = 1 + 5000000000u; }
                 ~~~~~~~~~~~
)");
}

// The shared helper, directly: the attach point pass uses it for rates,
// offsets and addresses.
TEST(IntLiteral, SharedParser) {
  uint64_t v = 0;
  std::string err;
  EXPECT_TRUE(ast::parse_int_literal("1_000", v, err));
  EXPECT_EQ(v, 1000u);
  EXPECT_TRUE(ast::parse_int_literal("100ms", v, err));
  EXPECT_EQ(v, 100000000u);
  EXPECT_TRUE(ast::parse_int_literal("0x400000", v, err));
  EXPECT_EQ(v, 0x400000u);
  EXPECT_FALSE(ast::parse_int_literal("", v, err));
  EXPECT_EQ(err, "invalid integer: ");
  EXPECT_FALSE(ast::parse_int_literal("abc", v, err));
  EXPECT_EQ(err, "invalid integer: abc");
  EXPECT_FALSE(ast::parse_int_literal("0x", v, err));
  EXPECT_EQ(err, "invalid integer: 0x");
  EXPECT_FALSE(ast::parse_int_literal("1S", v, err));
  EXPECT_EQ(err, "invalid trailing bytes: 1S");
  EXPECT_FALSE(ast::parse_int_literal("0x1ms", v, err));
  EXPECT_EQ(err, "invalid trailing bytes: 0x1ms");
  EXPECT_FALSE(ast::parse_int_literal("1e99999999999999999999", v, err));
  EXPECT_EQ(err, "overflow error, maximum value is 18446744073709551615: "
                 "1e99999999999999999999");
}

// ---- strings ----

std::string string_value(const std::string &literal_text) {
  Frontend f = parse_only("BEGIN { $x = " + literal_text + "; }");
  EXPECT_TRUE(f.parsed) << f.diags();
  if (!f.parsed)
    return "";
  auto *assign =
      ast::dyn_cast<ast::AssignVar>(f.ctx->root->probes[0]->body->stmts[0]);
  auto *s = ast::dyn_cast<ast::String>(assign->value);
  EXPECT_NE(s, nullptr);
  return s ? s->value : "";
}

TEST(LexerStrings, PlainAndEmpty) {
  EXPECT_EQ(string_value(R"("hello world")"), "hello world");
  EXPECT_EQ(string_value(R"("")"), "");
  // Comment markers inside strings are text.
  EXPECT_EQ(string_value(R"("a // b /* c */")"), "a // b /* c */");
  EXPECT_EQ(string_value(R"("{ } / ;")"), "{ } / ;");
}

TEST(LexerStrings, Escapes) {
  EXPECT_EQ(string_value(R"("a\nb\tc\rd")"), "a\nb\tc\rd");
  EXPECT_EQ(string_value(R"("q\"q")"), "q\"q");
  EXPECT_EQ(string_value(R"("back\\slash")"), "back\\slash");
  EXPECT_EQ(string_value(R"("\x41\X42\x4")"), "AB\x04");
  EXPECT_EQ(string_value(R"("\101\60\7")"), "A0\a");
  // At most three octal digits: \1234 is \123 then '4'.
  EXPECT_EQ(string_value(R"("\1234")"), "S4");
  // At most two hex digits.
  EXPECT_EQ(string_value(R"("\x414")"), "A4");
  EXPECT_EQ(string_value(R"("\033[31m")"), "\033[31m");
  std::string with_nul = string_value(R"("a\0b")");
  EXPECT_EQ(with_nul, std::string("a\0b", 3));
}

TEST(LexerStrings, EscapeErrors) {
  EXPECT_EQ(parse_tree(R"(BEGIN { $x = "\q"; })"),
            R"(stdin:1:14-18: ERROR: invalid escape character '\q'
BEGIN { $x = "\q"; }
             ~~~~
)");
  // Escapes that C knows but bpftrace does not.
  for (const char *e : {"\\e", "\\a", "\\v", "\\f", "\\b", "\\'"})
    EXPECT_EQ(literal_error(std::string("\"") + e + "\""),
              std::string("invalid escape character '") + e + "'");
  EXPECT_EQ(literal_error(R"("\777")"),
            "octal escape sequence out of range '\\777'");
  EXPECT_EQ(literal_error(R"("\x")"), "invalid hex escape sequence");
  EXPECT_EQ(literal_error(R"("\xg")"), "invalid hex escape sequence");
}

TEST(LexerStrings, Unterminated) {
  EXPECT_EQ(parse_tree("BEGIN { $x = \"abc; }\n"),
            R"(stdin:1:14-21: ERROR: unterminated string
BEGIN { $x = "abc; }
             ~~~~~~~
stdin:1:14-21: ERROR: syntax error, unexpected end of file, expecting }
BEGIN { $x = "abc; }
             ~~~~~~~
)");
}

TEST(LexerStrings, NewlineEndsAString) {
  Frontend f = parse_only("BEGIN { $x = \"abc\ndef\"; }");
  EXPECT_FALSE(f.parsed);
  ASSERT_FALSE(f.ctx->diags().all().empty());
  EXPECT_EQ(f.ctx->diags().all().front().message, "unterminated string");
}

// ---- comments and layout ----

TEST(LexerComments, LineAndBlockComments) {
  EXPECT_EQ(parse_tree(R"(// a comment at the top
BEGIN // after the attach point
{ // after the brace
  /* a block
     comment */ $x = /* inline */ 1; // trailing
  print(/* in call */ $x);
}
// at the end without a newline)"),
            R"(Program
 BEGIN
  =
   variable: $x
   int: 1
  call: print
   variable: $x
)");
}

TEST(LexerComments, CommentsInsidePredicates) {
  EXPECT_EQ(parse_tree("BEGIN /pid /* not the end */ == 1/ { }"),
            R"(Program
 BEGIN
  predicate
   ==
    identifier: pid
    int: 1
)");
  EXPECT_EQ(parse_tree("BEGIN /1/ /* comment */ { }"), R"(Program
 BEGIN
  predicate
   int: 1
)");
}

TEST(LexerComments, UnterminatedBlockComment) {
  EXPECT_EQ(parse_tree("BEGIN { /* never closed }"),
            R"(stdin:1:9-26: ERROR: unterminated comment
BEGIN { /* never closed }
        ~~~~~~~~~~~~~~~~~
stdin:1:11-26: ERROR: syntax error, unexpected end of file, expecting }
BEGIN { /* never closed }
          ~~~~~~~~~~~~~~~
)");
}

TEST(LexerComments, TabsWidenInTheUnderline) {
  EXPECT_EQ(diagnostics("BEGIN {\n\t$x = nope;\n}"),
            "stdin:2:7-11: ERROR: Unknown identifier: 'nope'\n"
            "    $x = nope;\n"
            "         ~~~~\n");
}

TEST(LexerShebang, FirstLineIsSkipped) {
  EXPECT_EQ(parse_tree("#!/usr/bin/env ubtrace\nBEGIN { }\n"), R"(Program
 BEGIN
)");
  EXPECT_EQ(parse_tree("#!/usr/local/bin/bpftrace -q\n// tool\nEND { }\n"),
            R"(Program
 END
)");
}

TEST(LexerShebang, ElsewhereIsAnError) {
  EXPECT_EQ(parse_tree("BEGIN { }\n#!/usr/bin/env ubtrace\n"),
            R"(stdin:2:1-23: ERROR: a shebang line must be the first line
#!/usr/bin/env ubtrace
~~~~~~~~~~~~~~~~~~~~~~
)");
}

TEST(LexerPositional, ParametersAndCount) {
  EXPECT_EQ(body_tree("print(($1, $2, $10, $#));"), R"(call: print
 tuple:
  param: $1
  param: $2
  param: $10
  param: $#
)");
}

TEST(LexerPositional, IndexOutOfRange) {
  EXPECT_EQ(
      parse_tree("BEGIN { print($99999999999); }"),
      R"(stdin:1:15-27: ERROR: param $99999999999 is out of integer range [1, 2147483647]
BEGIN { print($99999999999); }
              ~~~~~~~~~~~~
)");
}

TEST(LexerIdentifiers, VariablesMapsAndKeywordsAsFields) {
  EXPECT_EQ(body_tree("$_a1 = @_b2; @ = 1; @123 = 2; $y = $s.int32;"),
            R"(=
 variable: $_a1
 map: @_b2
=
 map: @
 int: 1
=
 map: @123
 int: 2
=
 variable: $y
 .int32
  variable: $s
)");
}

TEST(LexerIdentifiers, InvalidCharacters) {
  // The character is dropped and parsing goes on.
  EXPECT_EQ(parse_tree("BEGIN { $x = 1 ` 2; }"),
            R"(stdin:1:16-17: ERROR: invalid character '`'
BEGIN { $x = 1 ` 2; }
               ~
stdin:1:18-19: ERROR: syntax error, unexpected integer, expecting }
BEGIN { $x = 1 ` 2; }
                 ~
)");
  EXPECT_EQ(parse_tree("BEGIN { $x = 1; }\n#pragma once"),
            R"(stdin:2:1-13: ERROR: unknown preprocessor directive
#pragma once
~~~~~~~~~~~~
)");
}

TEST(LexerIdentifiers, AnythingElseAtTheTopLevelIsAnAttachPoint) {
  // Attach points are raw words; the attach point pass judges them.
  EXPECT_EQ(
      parse_tree("BEGIN { } `"),
      R"(stdin:1:11-12: ERROR: syntax error, unexpected end of file, expecting {
BEGIN { } `
          ~
)");
}

} // namespace
} // namespace ubtrace::test
