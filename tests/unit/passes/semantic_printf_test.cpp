// Semantic analysis of printf-style formats (printf, errorf, warnf,
// debugf, cat, system): each conversion against its argument, and the
// count of arguments against the count of conversions.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(Printf, AllIntegerConversions) {
  EXPECT_EQ(diagnostics("BEGIN { printf(\"%d %i %u %x %X %o %c %p\\n\", 1, 2, "
                        "3, 4, 5, 6, 65, 7); }"),
            "");
}

TEST(Printf, FlagsWidthPrecisionAndLength) {
  EXPECT_EQ(diagnostics("BEGIN { printf(\"%-5d|%05d|%+d|% "
                        "d|%#x|%5.2s|%lu|%llx|%hhu|%zd|%jd|%ld\\n\", 1, 2, 3, "
                        "4, 5, \"ab\", 6, 7, 8, 9, 10, 11); }"),
            "");
}

TEST(Printf, PercentEscape) {
  EXPECT_EQ(diagnostics("BEGIN { printf(\"100%%\\n\"); }"), "");
}

TEST(Printf, StringPrintsAnything) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { printf(\"%s %s %s %s %s\\n\", "
                        "\"a\", 1, (1, \"b\"), ustack, usym(arg0)); }"),
            "");
}

TEST(Printf, NotEnoughArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%d %s\\n\", 1); }"),
      R"BT(stdin:1:9-29: ERROR: printf: Not enough arguments for format string (1 supplied, 2 expected)
BEGIN { printf("%d %s\n", 1); }
        ~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, TooManyArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%d\\n\", 1, 2); }"),
      R"BT(stdin:1:9-29: ERROR: printf: Too many arguments for format string (2 supplied, 1 expected)
BEGIN { printf("%d\n", 1, 2); }
        ~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, NoConversionsWithArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"hello\", 1); }"),
      R"BT(stdin:1:9-27: ERROR: printf: Too many arguments for format string (1 supplied, 0 expected)
BEGIN { printf("hello", 1); }
        ~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, FormatMustBeALiteral) {
  EXPECT_EQ(diagnostics("BEGIN { $f = \"%d\"; printf($f, 1); }"),
            R"BT(stdin:1:20-33: ERROR: printf() expects a string literal
BEGIN { $f = "%d"; printf($f, 1); }
                   ~~~~~~~~~~~~~
)BT");
}

TEST(Printf, FormatMustBeAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(1); }"),
      R"BT(stdin:1:9-18: ERROR: printf() expects a string literal (integer provided)
BEGIN { printf(1); }
        ~~~~~~~~~
)BT");
}

TEST(Printf, IntegerConversionOfAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%d\\n\", \"a\"); }"),
      R"BT(stdin:1:9-28: ERROR: printf: %d specifier expects a value of type integer (string supplied)
BEGIN { printf("%d\n", "a"); }
        ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, HexOfATuple) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%x\\n\", (1, 2)); }"),
      R"BT(stdin:1:9-31: ERROR: printf: %x specifier expects a value of type integer (tuple supplied)
BEGIN { printf("%x\n", (1, 2)); }
        ~~~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, CharOfAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%c\\n\", \"a\"); }"),
      R"BT(stdin:1:9-28: ERROR: printf: %c specifier expects a value of type integer (string supplied)
BEGIN { printf("%c\n", "a"); }
        ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, FloatingPointIsNotSupported) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%f\\n\", 1); }"),
      R"BT(stdin:1:9-26: ERROR: printf: invalid format specifier '%f' (floating point is not supported)
BEGIN { printf("%f\n", 1); }
        ~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, ScientificIsNotSupported) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%e\\n\", 1); }"),
      R"BT(stdin:1:9-26: ERROR: printf: invalid format specifier '%e' (floating point is not supported)
BEGIN { printf("%e\n", 1); }
        ~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, IncompleteSpecifier) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%\", 1); }"),
      R"BT(stdin:1:9-23: ERROR: printf: incomplete format specifier at the end of '%'
BEGIN { printf("%", 1); }
        ~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, IncompleteAfterWidth) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%5\"); }"),
      R"BT(stdin:1:9-21: ERROR: printf: incomplete format specifier at the end of '%5'
BEGIN { printf("%5"); }
        ~~~~~~~~~~~~
)BT");
}

TEST(Printf, UnknownConversion) {
  EXPECT_EQ(diagnostics("BEGIN { printf(\"%y\\n\", 1); }"),
            R"BT(stdin:1:9-26: ERROR: printf: invalid format specifier '%y'
BEGIN { printf("%y\n", 1); }
        ~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, BufferConversions) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { printf(\"%r %rx %rh\\n\", buf(arg0, "
                        "4), buf(arg0, 4), buf(arg0, 4)); }"),
            "");
}

TEST(Printf, BufferConversionOfAnInteger) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%r\\n\", 1); }"),
      R"BT(stdin:1:9-26: ERROR: printf: %r specifier expects a value of type buffer (integer supplied)
BEGIN { printf("%r\n", 1); }
        ~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, AggregationsThatAreNotValues) {
  EXPECT_EQ(
      diagnostics("BEGIN { @h = hist(1); printf(\"%d\\n\", @h); }"),
      R"BT(stdin:1:38-40: ERROR: printf: can not print a value of type 'hist_t'
BEGIN { @h = hist(1); printf("%d\n", @h); }
                                     ~~
)BT");
}

TEST(Printf, CountReadsAsAnInteger) {
  EXPECT_EQ(diagnostics("BEGIN { @c = count(); printf(\"%d\\n\", @c); }"), "");
}

TEST(Printf, VoidArgument) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(\"%d\\n\", print(1)); }"),
      R"BT(stdin:1:24-32: ERROR: printf: can not print a value of type 'void'
BEGIN { printf("%d\n", print(1)); }
                       ~~~~~~~~
)BT");
}

TEST(Printf, ErrorfChecksItsFormat) {
  EXPECT_EQ(
      diagnostics("BEGIN { errorf(\"%d\\n\", \"a\"); }"),
      R"BT(stdin:1:9-28: ERROR: errorf: %d specifier expects a value of type integer (string supplied)
BEGIN { errorf("%d\n", "a"); }
        ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, WarnfChecksItsFormat) {
  EXPECT_EQ(
      diagnostics("BEGIN { warnf(\"%s %s\\n\", 1); }"),
      R"BT(stdin:1:9-28: ERROR: warnf: Not enough arguments for format string (1 supplied, 2 expected)
BEGIN { warnf("%s %s\n", 1); }
        ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, CatChecksItsFormat) {
  EXPECT_EQ(
      diagnostics("BEGIN { cat(\"/proc/%d/maps\"); }"),
      R"BT(stdin:1:9-29: ERROR: cat: Not enough arguments for format string (0 supplied, 1 expected)
BEGIN { cat("/proc/%d/maps"); }
        ~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, SystemChecksItsFormat) {
  RunOptions o;
  o.unsafe = true;
  EXPECT_EQ(
      diagnostics("BEGIN { system(\"echo %d %d\", 1); }", o),
      R"BT(stdin:1:9-32: ERROR: system: Not enough arguments for format string (1 supplied, 2 expected)
BEGIN { system("echo %d %d", 1); }
        ~~~~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Printf, NoArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { printf(); }"),
      R"BT(stdin:1:9-17: ERROR: printf() requires at least 1 argument (0 provided)
BEGIN { printf(); }
        ~~~~~~~~
)BT");
}

} // namespace
} // namespace ubtrace::test
