// The grammar of expressions: precedence and associativity, unary and
// postfix operators, casts against parenthesised expressions (bpftrace's
// rule), tuples, records, block expressions, calls, sizeof and offsetof.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(Precedence, ArithmeticBindsTighterThanComparison) {
  EXPECT_EQ(body_tree("$x = 1 + 2 * 3 - 4 / 2 % 3;"), R"(=
 variable: $x
 -
  +
   int: 1
   *
    int: 2
    int: 3
  %
   /
    int: 4
    int: 2
   int: 3
)");
}

TEST(Precedence, FullLadder) {
  // From weakest to strongest: || && | ^ & == < << + *
  EXPECT_EQ(body_tree("$x = 1 || 2 && 3 | 4 ^ 5 & 6 == 7 < 8 << 9 + 10 * 11;"),
            R"(=
 variable: $x
 ||
  int: 1
  &&
   int: 2
   |
    int: 3
    ^
     int: 4
     &
      int: 5
      ==
       int: 6
       <
        int: 7
        <<
         int: 8
         +
          int: 9
          *
           int: 10
           int: 11
)");
}

TEST(Precedence, LeftAssociative) {
  EXPECT_EQ(body_tree("$x = 10 - 4 - 3; $y = 8 / 4 / 2; $z = 1 << 2 >> 1;"),
            R"(=
 variable: $x
 -
  -
   int: 10
   int: 4
  int: 3
=
 variable: $y
 /
  /
   int: 8
   int: 4
  int: 2
=
 variable: $z
 >>
  <<
   int: 1
   int: 2
  int: 1
)");
}

TEST(Precedence, ComparisonOperators) {
  EXPECT_EQ(body_tree("$a = 1 <= 2; $b = 1 >= 2; $c = 1 != 2; $d = 1 > 2;"),
            R"(=
 variable: $a
 <=
  int: 1
  int: 2
=
 variable: $b
 >=
  int: 1
  int: 2
=
 variable: $c
 !=
  int: 1
  int: 2
=
 variable: $d
 >
  int: 1
  int: 2
)");
}

TEST(Precedence, ParenthesesGroup) {
  EXPECT_EQ(body_tree("$x = (1 + 2) * 3;"), R"(=
 variable: $x
 *
  +
   int: 1
   int: 2
  int: 3
)");
}

TEST(Ternary, RightAssociativeAndLowest) {
  EXPECT_EQ(body_tree("$x = 1 || 0 ? 2 : 3 ? 4 : 5;"), R"(=
 variable: $x
 ?:
  ||
   int: 1
   int: 0
  int: 2
  ?:
   int: 3
   int: 4
   int: 5
)");
}

TEST(Ternary, ShortFormRepeatsTheCondition) {
  EXPECT_EQ(body_tree("$x = 0; $y = $x ?: 7;"), R"(=
 variable: $x
 int: 0
=
 variable: $y
 ?:
  variable: $x
  variable: $x
  int: 7
)");
}

TEST(Unary, PrefixOperators) {
  EXPECT_EQ(body_tree("$x = -$a + !$b - ~$c * *$d + &$e;"), R"(=
 variable: $x
 +
  -
   +
    -
     variable: $a
    !
     variable: $b
   *
    ~
     variable: $c
    *
     variable: $d
  &
   variable: $e
)");
}

TEST(Unary, NegativeLiteralAndNegatedExpression) {
  EXPECT_EQ(body_tree("$x = -1; $y = -(1); $z = - -2; $w = 3 - -4;"), R"(=
 variable: $x
 int: -1
=
 variable: $y
 int: -1
=
 variable: $z
 -
  int: -2
=
 variable: $w
 -
  int: 3
  int: -4
)");
}

TEST(Unary, IncrementAndDecrement) {
  EXPECT_EQ(body_tree("$i++; $i--; ++$i; --$i; @m[1]++; --@n;"),
            R"(++ (post)
 variable: $i
-- (post)
 variable: $i
++ (pre)
 variable: $i
-- (pre)
 variable: $i
++ (post)
 map: @m
  int: 1
-- (pre)
 map: @n
)");
}

TEST(Unary, NotEqualIsNotNegation) {
  EXPECT_EQ(body_tree("$x = !$a != !$b;"), R"(=
 variable: $x
 !=
  !
   variable: $a
  !
   variable: $b
)");
}

TEST(Postfix, FieldArrowTupleIndexAndArray) {
  EXPECT_EQ(body_tree("$x = $a.b->c.0[1].d;"), R"(=
 variable: $x
 .d
  []
   .0
    ->c
     .b
      variable: $a
   int: 1
)");
}

TEST(Postfix, NestedTupleIndex) {
  EXPECT_EQ(body_tree("$x = $kv.0.1;"), R"(=
 variable: $x
 .1
  .0
   variable: $kv
)");
}

TEST(Postfix, TypeNamesAreValidFieldNames) {
  EXPECT_EQ(body_tree("$x = $s.string + $s->int;"), R"(=
 variable: $x
 +
  .string
   variable: $s
  ->int
   variable: $s
)");
}

TEST(Postfix, FieldAccessOnCallsAndMaps) {
  EXPECT_EQ(body_tree("$x = f().a + @m[1].b + @n.c;"), R"(=
 variable: $x
 +
  +
   .a
    call: f
   .b
    map: @m
     int: 1
  .c
   map: @n
)");
}

// bpftrace's rule: "(NAME)" followed by something that starts an
// expression is a cast; otherwise it is a parenthesised expression.
TEST(Casts, BuiltinTypes) {
  EXPECT_EQ(body_tree("$x = (int8)1 + (uint64)2 + (bool)3 + (string)4;"),
            R"(=
 variable: $x
 +
  +
   +
    (int8)
     int: 1
    (uint64)
     int: 2
   (bool)
    int: 3
  (string)
   int: 4
)");
}

TEST(Casts, PointersArraysAndRecords) {
  EXPECT_EQ(body_tree("$a = (struct foo *)1; $b = (union u **)2; "
                      "$c = (enum e)3; $d = (uint8[4])4; $e = (int32[])5; "
                      "$f = (int32*[2])6; $g = (string[8])7;"),
            R"(=
 variable: $a
 (struct foo *)
  int: 1
=
 variable: $b
 (union u * *)
  int: 2
=
 variable: $c
 (enum e)
  int: 3
=
 variable: $d
 (uint8[4])
  int: 4
=
 variable: $e
 (int32[])
  int: 5
=
 variable: $f
 (int32 *[2])
  int: 6
=
 variable: $g
 (string[8])
  int: 7
)");
}

TEST(Casts, CWordTypes) {
  EXPECT_EQ(body_tree("$x = (unsigned long)1; $y = (unsigned char *)2;"),
            R"(=
 variable: $x
 (unsigned long)
  int: 1
=
 variable: $y
 (unsigned char *)
  int: 2
)");
}

TEST(Casts, TypedefNameBeforeAnExpression) {
  EXPECT_EQ(body_tree("$x = (my_t)$y; $z = (my_t)*$p; $w = (my_t)-1; "
                      "$v = (my_t)(1);"),
            R"(=
 variable: $x
 (my_t)
  variable: $y
=
 variable: $z
 (my_t)
  *
   variable: $p
=
 variable: $w
 (my_t)
  int: -1
=
 variable: $v
 (my_t)
  int: 1
)");
}

TEST(Casts, ParenthesisedNameAloneIsAnExpression) {
  EXPECT_EQ(body_tree("$w = (myident); $x = (myident) + 1;"),
            R"(=
 variable: $w
 identifier: myident
=
 variable: $x
 +
  identifier: myident
  int: 1
)");
}

TEST(Casts, MinusStartsAnExpressionSoTheNameIsAType) {
  // As in bpftrace: '-' can start an expression, so "(x) - 1" casts -1.
  EXPECT_EQ(body_tree("$y = (x) - 1; $z = (x) - -1;"), R"(=
 variable: $y
 (x)
  int: -1
=
 variable: $z
 (x)
  -
   int: -1
)");
}

TEST(Casts, BuiltinsInParenthesesAreNeverTypes) {
  // "(pid)*tid" multiplies, "(myident)*arg0" casts a dereference.
  EXPECT_EQ(body_tree("$y = (pid)*tid; $z = (myident)*arg0; $a = (arg1)-1;"),
            R"(=
 variable: $y
 *
  identifier: pid
  identifier: tid
=
 variable: $z
 (myident)
  *
   identifier: arg0
=
 variable: $a
 -
  identifier: arg1
  int: 1
)");
}

TEST(Casts, ArrowAndDecrementAfterParenthesesAreNotCasts) {
  EXPECT_EQ(body_tree("$a = (x)->f; $b = (x) -= 1;"),
            R"(stdin:1:31-33: ERROR: syntax error, unexpected -=, expecting }
BEGIN { $a = (x)->f; $b = (x) -= 1; }
                              ~~
)");
  EXPECT_EQ(body_tree("$a = (x)->f;"), R"(=
 variable: $a
 ->f
  identifier: x
)");
}

TEST(Casts, VariablesInParenthesesAreNeverCasts) {
  EXPECT_EQ(body_tree("$w = ($a) - 1;"), R"(=
 variable: $w
 -
  variable: $a
  int: 1
)");
}

TEST(Casts, CastBindsTighterThanBinaryOperators) {
  EXPECT_EQ(body_tree("$x = (uint8)$a + 1;"), R"(=
 variable: $x
 +
  (uint8)
   variable: $a
  int: 1
)");
}

TEST(Casts, TypeofCast) {
  EXPECT_EQ(body_tree("$x = (typeof($y))1; $z = (typeof(uint16))2;"), R"(=
 variable: $x
 (typeof(...))
  variable: $y
  int: 1
=
 variable: $z
 (uint16)
  int: 2
)");
}

TEST(Tuples, EmptySingleAndTrailingComma) {
  EXPECT_EQ(body_tree("$a = (); $b = (1,); $c = (1, \"two\", (3, 4)); "
                      "$d = (5, 6,);"),
            R"(=
 variable: $a
 tuple:
=
 variable: $b
 tuple:
  int: 1
=
 variable: $c
 tuple:
  int: 1
  string: two
  tuple:
   int: 3
   int: 4
=
 variable: $d
 tuple:
  int: 5
  int: 6
)");
}

TEST(Records, NamedFieldsAndTrailingComma) {
  EXPECT_EQ(body_tree("$r = (a = 1, b = \"x\"); $s = (c = (d = 2),);"),
            R"(=
 variable: $r
 record:
  a =
   int: 1
  b =
   string: x
=
 variable: $s
 record:
  c =
   record:
    d =
     int: 2
)");
}

TEST(Records, ComparisonInParenthesesIsNotARecord) {
  EXPECT_EQ(body_tree("$r = (a == 1);"), R"(=
 variable: $r
 ==
  identifier: a
  int: 1
)");
}

TEST(BlockExpressions, ValueIsTheTrailingExpression) {
  EXPECT_EQ(body_tree("$a = { let $b = 1; $b + 1 };"), R"(=
 variable: $a
 block expression
  let $b
   int: 1
  value
   +
    variable: $b
    int: 1
)");
}

TEST(BlockExpressions, AsArgumentsOperandsAndNested) {
  EXPECT_EQ(body_tree("print({ 1 }); $x = 2 + { { 3 } }; $y = ({ 4 }, 5);"),
            R"(call: print
 block expression
  value
   int: 1
=
 variable: $x
 +
  int: 2
  block expression
   value
    block expression
     value
      int: 3
=
 variable: $y
 tuple:
  block expression
   value
    int: 4
  int: 5
)");
}

TEST(BlockExpressions, WithoutValue) {
  EXPECT_EQ(body_tree("$x = { print(1); };"), R"(=
 variable: $x
 block expression
  call: print
   int: 1
)");
}

TEST(Calls, ArgumentsAndMacroBang) {
  EXPECT_EQ(body_tree("f(); g(1, \"a\", $x); h!(); k!(@m);"), R"(call: f
call: g
 int: 1
 string: a
 variable: $x
call: h!
call: k!
 map: @m
)");
}

TEST(Calls, NotANotEqualAfterAName) {
  EXPECT_EQ(body_tree("$x = pid != 1;"), R"(=
 variable: $x
 !=
  identifier: pid
  int: 1
)");
}

TEST(Maps, KeysAndTupleKeys) {
  EXPECT_EQ(body_tree("@a = 1; @b[1] = 2; @c[1, \"x\"] = 3; @d[(1, 2)] = 4; "
                      "@[comm] = 5;"),
            R"(=
 map: @a
 int: 1
=
 map: @b
  int: 1
 int: 2
=
 map: @c
  int: 1
  string: x
 int: 3
=
 map: @d
  tuple:
   int: 1
   int: 2
 int: 4
=
 map: @
  identifier: comm
 int: 5
)");
}

TEST(SizeofOffsetof, TypesAndExpressions) {
  EXPECT_EQ(body_tree("$a = sizeof(struct foo); $b = sizeof(uint32); "
                      "$c = sizeof($x); $d = sizeof(my_t); "
                      "$e = sizeof(char *);"),
            R"(=
 variable: $a
 sizeof: struct foo
=
 variable: $b
 sizeof: uint32
=
 variable: $c
 sizeof
  variable: $x
=
 variable: $d
 sizeof
  identifier: my_t
=
 variable: $e
 sizeof: char *
)");
  EXPECT_EQ(body_tree("$a = offsetof(struct foo, b.c); $b = offsetof($x, d);"),
            R"(=
 variable: $a
 offsetof: struct foo, b.c
=
 variable: $b
 offsetof, d
  variable: $x
)");
}

TEST(Literals, BooleansStringsAndPositionals) {
  EXPECT_EQ(body_tree("$a = true; $b = false; $c = \"s\"; $d = $1;"), R"(=
 variable: $a
 bool: true
=
 variable: $b
 bool: false
=
 variable: $c
 string: s
=
 variable: $d
 param: $1
)");
}

} // namespace
} // namespace ubtrace::test
