// Semantic analysis of scratch variables and statements: types fixed by
// the first assignment (and widened), `let` with and without types, block
// scoping, loops, break/continue/return, unroll, conditions, functions.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(Variables, UndefinedVariable) {
  EXPECT_EQ(diagnostics("BEGIN { print($x); }"),
            R"BT(stdin:1:15-17: ERROR: Undefined or undeclared variable: $x
BEGIN { print($x); }
              ~~
)BT");
}

TEST(Variables, UndefinedVariableWithHint) {
  EXPECT_EQ(diagnostics("BEGIN { $count = 1; print($coutn); }"),
            R"BT(stdin:1:27-33: ERROR: Undefined or undeclared variable: $coutn
BEGIN { $count = 1; print($coutn); }
                          ~~~~~~
HINT: Did you mean '$count'?
)BT");
}

TEST(Variables, TypeChangeOfAVariable) {
  EXPECT_EQ(
      diagnostics("BEGIN { $a = 1; $a = \"s\"; }"),
      R"BT(stdin:1:17-25: ERROR: Type mismatch for $a: trying to assign value of type 'string[2]' when variable already contains a value of type 'int8'
BEGIN { $a = 1; $a = "s"; }
                ~~~~~~~~
)BT");
}

TEST(Variables, TupleElementTypeChange) {
  EXPECT_EQ(
      diagnostics("BEGIN { $c = (1, \"a\"); $c = (\"x\", 1); }"),
      R"BT(stdin:1:24-37: ERROR: Type mismatch for $c: trying to assign value of type '(string[2],int8)' when variable already contains a value of type '(int8,string[2])'
BEGIN { $c = (1, "a"); $c = ("x", 1); }
                       ~~~~~~~~~~~~~
)BT");
}

TEST(Variables, IntegersWiden) {
  EXPECT_EQ(
      diagnostics(
          "BEGIN { $d = (uint8)1; $d = -1; $e = (int32)1; $e = (uint64)2; }"),
      "");
}

TEST(Variables, StringsGrow) {
  EXPECT_EQ(diagnostics("BEGIN { $b = \"x\"; $b = \"longer\"; }"), "");
}

TEST(Variables, VoidCannotBeAssigned) {
  EXPECT_EQ(
      diagnostics("BEGIN { $v = print(1); }"),
      R"BT(stdin:1:9-22: ERROR: Value of type void cannot be assigned to $v
BEGIN { $v = print(1); }
        ~~~~~~~~~~~~~
)BT");
}

TEST(Variables, AggregationsCannotBeAssigned) {
  EXPECT_EQ(
      diagnostics("BEGIN { @h = hist(1); $w = @h; }"),
      R"BT(stdin:1:23-30: ERROR: Value of type 'hist_t' cannot be assigned to $w: aggregations only live in maps
BEGIN { @h = hist(1); $w = @h; }
                      ~~~~~~~
)BT");
}

TEST(Variables, LetWithoutValueThenAssign) {
  EXPECT_EQ(diagnostics("BEGIN { let $x; $x = 1; print($x); }"), "");
}

TEST(Variables, LetAnnotatedKeepsItsType) {
  EXPECT_EQ(
      diagnostics("BEGIN { let $y: int32; $y = 5; $y = \"s\"; }"),
      R"BT(stdin:1:32-40: ERROR: Type mismatch for $y: trying to assign value of type 'string[2]' when variable already contains a value of type 'int32'
BEGIN { let $y: int32; $y = 5; $y = "s"; }
                               ~~~~~~~~
)BT");
}

TEST(Variables, LetLiteralMustFit) {
  EXPECT_EQ(
      diagnostics("BEGIN { let $z: uint8 = -1; }"),
      R"BT(stdin:1:25-27: ERROR: Type mismatch for $z: the literal -1 does not fit in uint8
BEGIN { let $z: uint8 = -1; }
                        ~~
)BT");
}

TEST(Variables, LetLiteralTooBigForInt8) {
  EXPECT_EQ(
      diagnostics("BEGIN { let $z: int8 = 128; }"),
      R"BT(stdin:1:24-27: ERROR: Type mismatch for $z: the literal 128 does not fit in int8
BEGIN { let $z: int8 = 128; }
                       ~~~
)BT");
}

TEST(Variables, LetLiteralFits) {
  EXPECT_EQ(diagnostics("BEGIN { let $a: uint8 = 255; let $b: int8 = -128; let "
                        "$c: int16 = 32767; }"),
            "");
}

TEST(Variables, LetOfTheWrongType) {
  EXPECT_EQ(
      diagnostics("BEGIN { let $z: string = 1; }"),
      R"BT(stdin:1:9-27: ERROR: Type mismatch for $z: trying to assign value of type 'int8' when variable is declared as 'string[64]'
BEGIN { let $z: string = 1; }
        ~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Variables, LetVoid) {
  EXPECT_EQ(diagnostics("BEGIN { let $v: void; }"),
            R"BT(stdin:1:9-21: ERROR: Invalid variable declaration type: void
BEGIN { let $v: void; }
        ~~~~~~~~~~~~
)BT");
}

TEST(Variables, LetUnknownType) {
  EXPECT_EQ(diagnostics("BEGIN { let $u: nope_t; }"),
            R"BT(stdin:1:17-23: ERROR: Unknown type: nope_t
BEGIN { let $u: nope_t; }
                ~~~~~~
)BT");
}

TEST(Variables, LetUnknownStruct) {
  EXPECT_EQ(diagnostics("BEGIN { let $t: struct nope; }"),
            R"BT(stdin:1:17-28: ERROR: Unknown struct: struct nope
BEGIN { let $t: struct nope; }
                ~~~~~~~~~~~
)BT");
}

TEST(Variables, LetTwiceInAScope) {
  EXPECT_EQ(
      diagnostics("BEGIN { let $x = 1; let $x = 2; }"),
      R"BT(stdin:1:21-31: ERROR: Variable $x was already declared in this scope
BEGIN { let $x = 1; let $x = 2; }
                    ~~~~~~~~~~
)BT");
}

TEST(Variables, LetShadowingAnOuterVariable) {
  EXPECT_EQ(
      diagnostics("BEGIN { $c = 1; if (1) { let $c = 3; } }"),
      R"BT(stdin:1:26-36: ERROR: Variable $c is already declared in an outer scope
BEGIN { $c = 1; if (1) { let $c = 3; } }
                         ~~~~~~~~~~
)BT");
}

TEST(Variables, BlockScopes) {
  EXPECT_EQ(diagnostics("BEGIN { { let $a = 1; } print($a); }"),
            R"BT(stdin:1:31-33: ERROR: Undefined or undeclared variable: $a
BEGIN { { let $a = 1; } print($a); }
                              ~~
)BT");
}

TEST(Variables, IfBranchScopes) {
  EXPECT_EQ(diagnostics(
                "BEGIN { if (1) { $b = 1; } else { $b = \"s\"; } print($b); }"),
            R"BT(stdin:1:53-55: ERROR: Undefined or undeclared variable: $b
BEGIN { if (1) { $b = 1; } else { $b = "s"; } print($b); }
                                                    ~~
)BT");
}

TEST(Variables, AssignInAnInnerBlockReachesTheOuter) {
  EXPECT_EQ(diagnostics("BEGIN { $c = 1; { $c = 2; } print($c); }"), "");
}

TEST(Variables, ForVariableIsLoopLocal) {
  EXPECT_EQ(diagnostics("BEGIN { for ($i : 0..3) { $j = $i; } print($i); }"),
            R"BT(stdin:1:44-46: ERROR: Undefined or undeclared variable: $i
BEGIN { for ($i : 0..3) { $j = $i; } print($i); }
                                           ~~
)BT");
}

TEST(Variables, ForRangeOfStrings) {
  EXPECT_EQ(
      diagnostics("BEGIN { for ($i : \"a\"..5) { } }"),
      R"BT(stdin:1:19-22: ERROR: for loop ranges take integers, not string[2]
BEGIN { for ($i : "a"..5) { } }
                  ~~~
)BT");
}

TEST(Variables, BreakOutsideALoop) {
  EXPECT_EQ(diagnostics("BEGIN { break; }"),
            R"BT(stdin:1:9-14: ERROR: break used outside of a loop
BEGIN { break; }
        ~~~~~
)BT");
}

TEST(Variables, ContinueOutsideALoop) {
  EXPECT_EQ(diagnostics("BEGIN { continue; }"),
            R"BT(stdin:1:9-17: ERROR: continue used outside of a loop
BEGIN { continue; }
        ~~~~~~~~
)BT");
}

TEST(Variables, BreakInLoops) {
  EXPECT_EQ(diagnostics(
                "BEGIN { @m[1] = 1; for ($kv : @m) { break; } for ($i : 0..2) "
                "{ continue; } $w = 0; while ($w < 3) { $w++; break; } }"),
            "");
}

// `return x;` in a probe ends it, x evaluated and dropped (as bpftrace).
TEST(Variables, ProbesMayReturnAValue) {
  EXPECT_EQ(diagnostics("BEGIN { $a = 1; return $a + 1; }"), "");
}

TEST(Variables, ReturnWithoutValue) {
  EXPECT_EQ(diagnostics("BEGIN { if (1) { return; } }"), "");
}

TEST(Variables, UnrollCountMustBeLiteral) {
  EXPECT_EQ(diagnostics("BEGIN { $n = 3; unroll ($n) { } }"),
            R"BT(stdin:1:17-32: ERROR: unroll() takes an integer literal
BEGIN { $n = 3; unroll ($n) { } }
                ~~~~~~~~~~~~~~~
)BT");
}

TEST(Variables, UnrollMaximum) {
  EXPECT_EQ(diagnostics("BEGIN { unroll (101) { } }"),
            R"BT(stdin:1:9-25: ERROR: unroll maximum value is 100
BEGIN { unroll (101) { } }
        ~~~~~~~~~~~~~~~~
)BT");
}

TEST(Variables, UnrollMinimum) {
  EXPECT_EQ(diagnostics("BEGIN { unroll (0) { } }"),
            R"BT(stdin:1:9-23: ERROR: unroll minimum value is 1
BEGIN { unroll (0) { } }
        ~~~~~~~~~~~~~~
)BT");
}

TEST(Variables, IfConditionOfAString) {
  EXPECT_EQ(diagnostics("BEGIN { if (\"s\") { } }"),
            R"BT(stdin:1:13-16: ERROR: Invalid condition in if(): string[2]
BEGIN { if ("s") { } }
            ~~~
)BT");
}

TEST(Variables, WhileConditionOfATuple) {
  EXPECT_EQ(
      diagnostics("BEGIN { while ((1, 2)) { } }"),
      R"BT(stdin:1:16-22: ERROR: Invalid condition in while(): (int8,int8)
BEGIN { while ((1, 2)) { } }
               ~~~~~~
)BT");
}

TEST(Variables, PredicateOfAString) {
  EXPECT_EQ(diagnostics("BEGIN /\"s\"/ { }"),
            R"BT(stdin:1:8-11: ERROR: Invalid type for predicate: string[2]
BEGIN /"s"/ { }
       ~~~
)BT");
}

TEST(Variables, PredicatePointerAndBool) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f /(int8 *)arg0 && true/ { }"), "");
}

TEST(Variables, IncrementNeedsAVariable) {
  EXPECT_EQ(
      diagnostics("BEGIN { 1++; }"),
      R"BT(stdin:1:9-12: ERROR: The ++ operator must be applied to a map or variable
BEGIN { 1++; }
        ~~~
)BT");
}

TEST(Variables, IncrementOfAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { $s = \"a\"; $s++; }"),
      R"BT(stdin:1:19-23: ERROR: The ++ operator can not be used on expressions of type 'string[2]'
BEGIN { $s = "a"; $s++; }
                  ~~~~
)BT");
}

TEST(Variables, AddressOfALiteral) {
  EXPECT_EQ(
      diagnostics("BEGIN { $m = &1; }"),
      R"BT(stdin:1:14-16: ERROR: The & operator can only take the address of a variable or map
BEGIN { $m = &1; }
             ~~
)BT");
}

TEST(Variables, FunctionReturnsNothing) {
  EXPECT_EQ(
      diagnostics("fn bad(): int64 { return; } BEGIN { }"),
      R"BT(stdin:1:19-25: ERROR: Function bad must return a value of type int64
fn bad(): int64 { return; } BEGIN { }
                  ~~~~~~
)BT");
}

TEST(Variables, FunctionReturnsAValueFromVoid) {
  EXPECT_EQ(
      diagnostics("fn bad(): void { return 1; } BEGIN { }"),
      R"BT(stdin:1:18-26: ERROR: Function bad returns void, but a value is returned
fn bad(): void { return 1; } BEGIN { }
                 ~~~~~~~~
)BT");
}

TEST(Variables, FunctionReturnType) {
  EXPECT_EQ(
      diagnostics("fn bad($s: string): int64 { return $s; } BEGIN { }"),
      R"BT(stdin:1:29-38: ERROR: Function bad returns int64, not string[64]
fn bad($s: string): int64 { return $s; } BEGIN { }
                            ~~~~~~~~~
)BT");
}

TEST(Variables, FunctionArity) {
  EXPECT_EQ(
      diagnostics("fn add($a: int64, $b: int64): int64 { return $a + $b; } "
                  "BEGIN { print(add(1)); }"),
      R"BT(stdin:1:71-77: ERROR: Function add requires 2 arguments (1 provided)
fn add($a: int64, $b: int64): int64 { return $a + $b; } BEGIN { print(add(1)); }
                                                                      ~~~~~~
)BT");
}

TEST(Variables, FunctionArgumentType) {
  EXPECT_EQ(
      diagnostics("fn add($a: int64, $b: int64): int64 { return $a + $b; } "
                  "BEGIN { print(add(\"a\", 2)); }"),
      R"BT(stdin:1:75-78: ERROR: Function add argument 1 expects int64, got string[2]
fn add($a: int64, $b: int64): int64 { return $a + $b; } BEGIN { print(add("a", 2)); }
                                                                          ~~~
)BT");
}

TEST(Variables, FunctionValid) {
  EXPECT_EQ(
      diagnostics("fn add($a: int64, $b: int64): int64 { return $a + $b; } "
                  "BEGIN { print(add(1, 2)); }"),
      "");
}

// A variable's type is joined over all its assignments, as in bpftrace: a
// literal is its smallest type (1 is an int8, 300 an int16), uint8 and
// int16 make int16, and every node of the variable has the joined type.
TEST(Variables, TypesOfAssignments) {
  EXPECT_EQ(typed_body("$a = (uint8)1; $b = (int16)-2; $c = \"str\"; "
                       "let $d: uint16 = 7; $e = true; $a = 300;"),
            R"(=
 variable: $a :: [uint16]
 (uint8) :: [uint8]
  int: 1 :: [int8]
=
 variable: $b :: [int16]
 (int16) :: [int16]
  int: -2 :: [int8]
=
 variable: $c :: [string[4]]
 string: str :: [string[4]]
let $d: uint16
 int: 7 :: [int8]
=
 variable: $e :: [bool]
 bool: true :: [bool]
=
 variable: $a :: [uint16]
 int: 300 :: [int16]
)");
}

TEST(Variables, RangeLoopVariableHasTheBoundsType) {
  EXPECT_EQ(typed_body("for ($i : 0..3) { print($i); }"), R"(for $i
 int: 0 :: [int8]
 int: 3 :: [int8]
 body
  call: print :: [void]
   variable: $i :: [int8]
)");
}

// ++ and -- count in 64 bits: a variable they touch is at least 64 bits
// wide, so $x = 127; $x++ gives 128, not -128. A declared type stays.
TEST(Variables, IncrementWidensToSixtyFourBits) {
  EXPECT_EQ(typed_body("$x = 127; $x++; let $y: uint8 = 1; $y--;"), R"(=
 variable: $x :: [int64]
 int: 127 :: [int8]
++ (post) :: [int64]
 variable: $x :: [int64]
let $y: uint8
 int: 1 :: [int8]
-- (post) :: [uint8]
 variable: $y :: [uint8]
)");
}

TEST(Variables, BlockExpressionsHaveTheirValuesType) {
  EXPECT_EQ(typed_body("$a = { let $b = \"x\"; $b }; $c = { print(1); };"),
            R"(stdin:1:36-54: ERROR: Value of type void cannot be assigned to $c
BEGIN { $a = { let $b = "x"; $b }; $c = { print(1); }; }
                                   ~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(typed_body("$a = { let $b = \"x\"; $b };"), R"(=
 variable: $a :: [string[2]]
 block expression :: [string[2]]
  let $b
   string: x :: [string[2]]
  value
   variable: $b :: [string[2]]
)");
}

} // namespace
} // namespace ubtrace::test
