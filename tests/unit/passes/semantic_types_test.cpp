// Semantic analysis of expressions and their types: tuples and records,
// operators on each type (bpftrace's "Type mismatch" against "can not be
// used"), pointers, arrays, casts, field access, sizeof and offsetof.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(Types, TupleIndexOutOfRange) {
  EXPECT_EQ(
      diagnostics("BEGIN { $t = (1, \"a\"); print($t.2); }"),
      R"BT(stdin:1:30-34: ERROR: Invalid tuple index: 2. Found 2 elements in tuple.
BEGIN { $t = (1, "a"); print($t.2); }
                             ~~~~
)BT");
}

TEST(Types, TupleArrayIndexOutOfRange) {
  EXPECT_EQ(
      diagnostics("BEGIN { $t = (1, \"a\"); print($t[5]); }"),
      R"BT(stdin:1:30-35: ERROR: Invalid tuple index: 5. Found 2 elements in tuple.
BEGIN { $t = (1, "a"); print($t[5]); }
                             ~~~~~
)BT");
}

TEST(Types, TupleIndexMustBeLiteral) {
  EXPECT_EQ(
      diagnostics("BEGIN { $t = (1, \"a\"); $i = 1; print($t[$i]); }"),
      R"BT(stdin:1:41-43: ERROR: Tuples can only be indexed with an integer literal
BEGIN { $t = (1, "a"); $i = 1; print($t[$i]); }
                                        ~~
)BT");
}

TEST(Types, TupleHasNoFields) {
  EXPECT_EQ(
      diagnostics("BEGIN { $t = (1, \"a\"); print($t.x); }"),
      R"BT(stdin:1:30-34: ERROR: Can not access field 'x' on expression of type '(int8,string[2])'
BEGIN { $t = (1, "a"); print($t.x); }
                             ~~~~
)BT");
}

TEST(Types, TupleOfVoid) {
  EXPECT_EQ(
      diagnostics("BEGIN { $t = (print(1), 2); }"),
      R"BT(stdin:1:15-23: ERROR: Value of type 'void' cannot be part of a tuple
BEGIN { $t = (print(1), 2); }
              ~~~~~~~~
)BT");
}

TEST(Types, TupleOfAnAggregation) {
  EXPECT_EQ(
      diagnostics("BEGIN { @h = hist(1); $t = (@h, 2); }"),
      R"BT(stdin:1:29-31: ERROR: Value of type 'hist_t' cannot be part of a tuple
BEGIN { @h = hist(1); $t = (@h, 2); }
                            ~~
)BT");
}

TEST(Types, RecordMissingField) {
  EXPECT_EQ(diagnostics("BEGIN { $r = (a = 1, b = \"x\"); print($r.c); }"),
            R"BT(stdin:1:38-42: ERROR: Record does not contain a field named 'c'
BEGIN { $r = (a = 1, b = "x"); print($r.c); }
                                     ~~~~
)BT");
}

TEST(Types, RecordHasNoIndexes) {
  EXPECT_EQ(
      diagnostics("BEGIN { $r = (a = 1, b = \"x\"); print($r.0); }"),
      R"BT(stdin:1:38-42: ERROR: Can not access index '0' on expression of type 'record { .a = int8, .b = string[2] }'
BEGIN { $r = (a = 1, b = "x"); print($r.0); }
                                     ~~~~
)BT");
}

TEST(Types, RecordDuplicateField) {
  EXPECT_EQ(diagnostics("BEGIN { $r = (a = 1, a = 2); }"),
            R"BT(stdin:1:22-23: ERROR: Duplicate field name in record: a
BEGIN { $r = (a = 1, a = 2); }
                     ~
)BT");
}

// Records pair their fields by name, as in bpftrace: the same fields in
// another order are the same record type (the variable keeps its order);
// other fields are not.
TEST(Types, RecordFieldOrderDoesNotMatter) {
  EXPECT_EQ(diagnostics(
                "BEGIN { $r = (a = 1, b = \"x\"); $r = (b = \"y\", a = 2); }"),
            "");
  EXPECT_EQ(
      diagnostics("BEGIN { $r = (a = 1, b = 2); $r = (a = 1, c = 2); }"),
      R"BT(stdin:1:30-49: ERROR: Type mismatch for $r: trying to assign value of type 'record { .a = int8, .c = int8 }' when variable already contains a value of type 'record { .a = int8, .b = int8 }'
BEGIN { $r = (a = 1, b = 2); $r = (a = 1, c = 2); }
                             ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, RecordFieldsWiden) {
  EXPECT_EQ(diagnostics("BEGIN { $r = (a = 1, b = \"x\"); $r = (a = 2, b = "
                        "\"yy\"); print($r.b); }"),
            "");
}

TEST(Types, TupleComparison) {
  EXPECT_EQ(
      diagnostics(
          "BEGIN { $e = (1, 2) == (1, 2); $f = (1, \"a\") != (2, \"b\"); }"),
      "");
}

TEST(Types, TupleComparisonOfOtherShapes) {
  EXPECT_EQ(
      diagnostics("BEGIN { $f = (1, 2) == (1, \"a\"); }"),
      R"BT(stdin:1:14-32: ERROR: Type mismatch for '==': comparing (int8,int8) with (int8,string[2])
BEGIN { $f = (1, 2) == (1, "a"); }
             ~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, StringComparison) {
  EXPECT_EQ(
      diagnostics("BEGIN { $c = \"a\" == \"b\"; $d = comm != \"bash\"; }"), "");
}

TEST(Types, StringOrdering) {
  EXPECT_EQ(
      diagnostics("BEGIN { $d = \"a\" < \"b\"; }"),
      R"BT(stdin:1:14-23: ERROR: The < operator can not be used on expressions of types string[2], string[2]
BEGIN { $d = "a" < "b"; }
             ~~~~~~~~~
)BT");
}

TEST(Types, StringArithmetic) {
  EXPECT_EQ(
      diagnostics("BEGIN { $b = \"a\" + \"b\"; }"),
      R"BT(stdin:1:14-23: ERROR: The + operator can not be used on expressions of types string[2], string[2]
BEGIN { $b = "a" + "b"; }
             ~~~~~~~~~
)BT");
}

TEST(Types, MixedArithmetic) {
  EXPECT_EQ(
      diagnostics("BEGIN { $a = 1 + \"s\"; }"),
      R"BT(stdin:1:14-21: ERROR: Type mismatch for '+': comparing int8 with string[2]
BEGIN { $a = 1 + "s"; }
             ~~~~~~~
)BT");
}

TEST(Types, LogicalOfAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { $n = 1 && \"s\"; }"),
      R"BT(stdin:1:14-22: ERROR: Type mismatch for '&&': comparing int8 with string[2]
BEGIN { $n = 1 && "s"; }
             ~~~~~~~~
)BT");
}

TEST(Types, DivisionByZero) {
  EXPECT_EQ(diagnostics("BEGIN { $g = 1 / 0; }"),
            R"BT(stdin:1:14-19: ERROR: Division by zero
BEGIN { $g = 1 / 0; }
             ~~~~~
)BT");
}

TEST(Types, ModuloByZero) {
  EXPECT_EQ(diagnostics("BEGIN { $h = 5 % 0; }"),
            R"BT(stdin:1:14-19: ERROR: Division by zero
BEGIN { $h = 5 % 0; }
             ~~~~~
)BT");
}

TEST(Types, NegateAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { $j = -\"s\"; }"),
      R"BT(stdin:1:14-18: ERROR: The - operator can not be used on expressions of type 'string[2]'
BEGIN { $j = -"s"; }
             ~~~~
)BT");
}

TEST(Types, NotAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { $i = !\"s\"; }"),
      R"BT(stdin:1:14-18: ERROR: The ! operator can not be used on expressions of type 'string[2]'
BEGIN { $i = !"s"; }
             ~~~~
)BT");
}

TEST(Types, ComplementAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { $k = ~\"s\"; }"),
      R"BT(stdin:1:14-18: ERROR: The ~ operator can not be used on expressions of type 'string[2]'
BEGIN { $k = ~"s"; }
             ~~~~
)BT");
}

TEST(Types, DereferenceAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { $l = *\"s\"; }"),
      R"BT(stdin:1:14-18: ERROR: Can not dereference type 'string[2]': only pointers can be dereferenced
BEGIN { $l = *"s"; }
             ~~~~
)BT");
}

TEST(Types, DereferenceAnInteger) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { $v = *arg0; }"), "");
}

TEST(Types, DereferenceAVoidPointer) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { $x = (void *)arg0; $y = *$x; }"),
      R"BT(stdin:1:43-46: ERROR: Can not dereference a void pointer: cast it first
uprobe:/bin/x:f { $x = (void *)arg0; $y = *$x; }
                                          ~~~
)BT");
}

TEST(Types, IndexAVoidPointer) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { $x = (void *)arg0; $z = $x[1]; }"),
      R"BT(stdin:1:43-48: ERROR: Can not index a void pointer: cast it first
uprobe:/bin/x:f { $x = (void *)arg0; $z = $x[1]; }
                                          ~~~~~
)BT");
}

TEST(Types, PointerArithmetic) {
  EXPECT_EQ(diagnostics(
                "uprobe:/bin/x:f { $p = (int32 *)arg0; $q = $p + 1; $r = $p - "
                "$p; $s = 1 + $p; $u = $p & 0xfff; if ($p) {} $a = $p == 0; }"),
            "");
}

TEST(Types, IntegerMinusPointer) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { $p = (int32 *)arg0; $t = 1 - $p; }"),
      R"BT(stdin:1:44-50: ERROR: The - operator can not be used on expressions of types int8, int32 *
uprobe:/bin/x:f { $p = (int32 *)arg0; $t = 1 - $p; }
                                           ~~~~~~
)BT");
}

TEST(Types, ArrayIndexOutOfBounds) {
  EXPECT_EQ(
      diagnostics("struct S { int a[4]; } uprobe:/bin/x:f { $s = (struct S "
                  "*)arg0; print($s->a[4]); }"),
      R"BT(stdin:1:71-79: ERROR: the index 4 is out of bounds for array of size 4
struct S { int a[4]; } uprobe:/bin/x:f { $s = (struct S *)arg0; print($s->a[4]); }
                                                                      ~~~~~~~~
)BT");
}

TEST(Types, ArrayIndexOfAString) {
  EXPECT_EQ(
      diagnostics("struct S { int a[4]; } uprobe:/bin/x:f { $s = (struct S "
                  "*)arg0; print($s->a[\"x\"]); }"),
      R"BT(stdin:1:77-80: ERROR: The array index operator [] only accepts integers, not string[2]
struct S { int a[4]; } uprobe:/bin/x:f { $s = (struct S *)arg0; print($s->a["x"]); }
                                                                            ~~~
)BT");
}

TEST(Types, StringIndexOutOfBounds) {
  EXPECT_EQ(
      diagnostics("BEGIN { $s = \"abc\"; print($s[4]); }"),
      R"BT(stdin:1:27-32: ERROR: the index 4 is out of bounds for string of size 4
BEGIN { $s = "abc"; print($s[4]); }
                          ~~~~~
)BT");
}

TEST(Types, IndexAnInteger) {
  EXPECT_EQ(
      diagnostics("BEGIN { $i = 5; print($i[0]); }"),
      R"BT(stdin:1:23-28: ERROR: The array index operator [] can not be used on expressions of type 'int8'
BEGIN { $i = 5; print($i[0]); }
                      ~~~~~
)BT");
}

TEST(Types, TernaryBranchesDiffer) {
  EXPECT_EQ(
      diagnostics("BEGIN { $a = 1 ? 2 : \"s\"; }"),
      R"BT(stdin:1:14-25: ERROR: Ternary operator branches have different types: 'int8' and 'string[2]'
BEGIN { $a = 1 ? 2 : "s"; }
             ~~~~~~~~~~~
)BT");
}

TEST(Types, TernaryOfStrings) {
  EXPECT_EQ(diagnostics("BEGIN { $b = 1 ? \"a\" : \"bb\"; }"), "");
}

TEST(Types, TernaryCondition) {
  EXPECT_EQ(diagnostics("BEGIN { $c = \"s\" ? 1 : 2; }"),
            R"BT(stdin:1:14-17: ERROR: Invalid condition in ternary: string[2]
BEGIN { $c = "s" ? 1 : 2; }
             ~~~
)BT");
}

TEST(Types, TernaryOfVoids) {
  EXPECT_EQ(diagnostics("BEGIN { 1 ? print(1) : print(2); }"), "");
}

TEST(Types, CastStringToInteger) {
  EXPECT_EQ(diagnostics("BEGIN { $b = (uint16)\"s\"; }"),
            R"BT(stdin:1:14-25: ERROR: Cannot cast from "string[2]" to "uint16"
BEGIN { $b = (uint16)"s"; }
             ~~~~~~~~~~~
)BT");
}

TEST(Types, CastIntegerToString) {
  EXPECT_EQ(diagnostics("BEGIN { $c = (string)1; }"),
            R"BT(stdin:1:14-23: ERROR: Cannot cast from "int8" to "string[64]"
BEGIN { $c = (string)1; }
             ~~~~~~~~~
)BT");
}

TEST(Types, CastToArrayOfTheWrongSize) {
  EXPECT_EQ(
      diagnostics("BEGIN { $f = (int32[3])(uint64)1; }"),
      R"BT(stdin:1:14-33: ERROR: Cannot cast from "uint64" to "int32[3]": sizes differ (8 and 12 bytes)
BEGIN { $f = (int32[3])(uint64)1; }
             ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, CastToArrayInfersTheCount) {
  EXPECT_EQ(diagnostics(
                "BEGIN { $e = (uint8[])(uint32)5; $g = (int16[])(uint64)7; }"),
            "");
}

TEST(Types, CastToArrayCannotInferTheCount) {
  EXPECT_EQ(
      diagnostics("BEGIN { $e = (int32[])(uint8)5; }"),
      R"BT(stdin:1:14-31: ERROR: Cannot determine array size: the element size is 4 and the cast value is 1 bytes
BEGIN { $e = (int32[])(uint8)5; }
             ~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, CastStringToArray) {
  EXPECT_EQ(
      diagnostics("BEGIN { $g = (uint8[8])\"abcdefgh\"; }"),
      R"BT(stdin:1:14-34: ERROR: Cannot cast from "string[9]" to "uint8[8]": sizes differ (9 and 8 bytes)
BEGIN { $g = (uint8[8])"abcdefgh"; }
             ~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, CastStringToArrayOfItsSize) {
  EXPECT_EQ(diagnostics("BEGIN { $g = (uint8[9])\"abcdefgh\"; "
                        "$h = (int8[])\"ab\"; $i = (uint16[])\"abc\"; }"),
            "");
}

TEST(Types, CastArrayToInteger) {
  EXPECT_EQ(diagnostics("BEGIN { $a = (uint8[4])(uint32)1; $b = (uint32)$a; }"),
            "");
}

TEST(Types, CastToAStructValue) {
  EXPECT_EQ(
      diagnostics("struct S { int a; } BEGIN { $j = (struct S)0; }"),
      R"BT(stdin:1:34-45: ERROR: Cannot cast to struct S: cast to a pointer, e.g. (struct S *)
struct S { int a; } BEGIN { $j = (struct S)0; }
                                 ~~~~~~~~~~~
)BT");
}

TEST(Types, CastToAnUnknownStruct) {
  EXPECT_EQ(diagnostics("BEGIN { $i = (struct nope *)0; }"), "");
}

TEST(Types, CastToAnUnknownStructValue) {
  EXPECT_EQ(diagnostics("BEGIN { $i = (struct nope)0; }"),
            R"BT(stdin:1:15-26: ERROR: Unknown struct: struct nope
BEGIN { $i = (struct nope)0; }
              ~~~~~~~~~~~
)BT");
}

TEST(Types, CastToVoid) {
  EXPECT_EQ(diagnostics("BEGIN { $k = (void)1; }"),
            R"BT(stdin:1:14-21: ERROR: Cannot cast from "int8" to "void"
BEGIN { $k = (void)1; }
             ~~~~~~~
)BT");
}

TEST(Types, CastToAnUnknownType) {
  EXPECT_EQ(diagnostics("BEGIN { $l = (nope_t)1; }"),
            R"BT(stdin:1:15-21: ERROR: Unknown type: nope_t
BEGIN { $l = (nope_t)1; }
              ~~~~~~
)BT");
}

TEST(Types, CastTupleToInteger) {
  EXPECT_EQ(
      diagnostics("BEGIN { $m = (uint64)(1, 2); }"),
      R"BT(stdin:1:14-28: ERROR: Cannot cast from "(int8,int8)" to "uint64"
BEGIN { $m = (uint64)(1, 2); }
             ~~~~~~~~~~~~~~
)BT");
}

TEST(Types, CastToBoolAndPointer) {
  EXPECT_EQ(diagnostics(
                "BEGIN { $h = (bool)5; $d = (int32 *)1; $e = (uint8 **)$d; }"),
            "");
}

TEST(Types, FieldOfAnInteger) {
  EXPECT_EQ(
      diagnostics("BEGIN { $i = 1; print($i.x); }"),
      R"BT(stdin:1:23-27: ERROR: Can not access field 'x' on expression of type 'int8'
BEGIN { $i = 1; print($i.x); }
                      ~~~~
)BT");
}

TEST(Types, FieldOfAStructPointer) {
  // `.` and `->` both read through pointers; `->` works on values too.
  EXPECT_EQ(
      diagnostics("struct S { int x; struct S *n; } uprobe:/bin/x:f { "
                  "$s = (struct S *)arg0; print(($s->x, $s.x, $s->n->n.x)); "
                  "$v = *$s; print(($v.x, $v->x)); }"),
      "");
}

TEST(Types, UnknownFieldOfAStruct) {
  EXPECT_EQ(
      diagnostics("struct S { int x; } uprobe:/bin/x:f { $s = (struct S "
                  "*)arg0; print($s->y); }"),
      R"BT(stdin:1:68-73: ERROR: struct S does not contain a field named 'y'
struct S { int x; } uprobe:/bin/x:f { $s = (struct S *)arg0; print($s->y); }
                                                                   ~~~~~
)BT");
}

TEST(Types, UnknownFieldWithHint) {
  EXPECT_EQ(
      diagnostics("struct S { int count; } uprobe:/bin/x:f { $s = (struct S "
                  "*)arg0; print($s->coutn); }"),
      R"BT(stdin:1:72-81: ERROR: struct S does not contain a field named 'coutn'
struct S { int count; } uprobe:/bin/x:f { $s = (struct S *)arg0; print($s->coutn); }
                                                                       ~~~~~~~~~
)BT");
}

TEST(Types, FieldOfAField) {
  EXPECT_EQ(
      diagnostics("struct S { int x; } uprobe:/bin/x:f { $s = (struct S "
                  "*)arg0; print($s->x.y); }"),
      R"BT(stdin:1:68-75: ERROR: Can not access field 'y' on expression of type 'int32'
struct S { int x; } uprobe:/bin/x:f { $s = (struct S *)arg0; print($s->x.y); }
                                                                   ~~~~~~~
)BT");
}

TEST(Types, FieldOfAnUndefinedStruct) {
  EXPECT_EQ(
      diagnostics(
          "uprobe:/bin/x:f { $s = (struct later *)arg0; print($s->x); }"),
      R"BT(stdin:1:52-57: ERROR: Can not access field 'x' of struct later: its definition is unknown (define it at the top of the script)
uprobe:/bin/x:f { $s = (struct later *)arg0; print($s->x); }
                                                   ~~~~~
)BT");
}

TEST(Types, SizeofTypesAndExpressions) {
  EXPECT_EQ(diagnostics("struct S { char c; long l; } BEGIN { "
                        "print((sizeof(struct S), sizeof(uint16), "
                        "sizeof(\"abc\"), sizeof(int32 *), sizeof(comm))); }"),
            "");
}

TEST(Types, SizeofUnknownType) {
  EXPECT_EQ(diagnostics("BEGIN { print(sizeof(nope_t)); }"),
            R"BT(stdin:1:22-28: ERROR: Unknown type: nope_t
BEGIN { print(sizeof(nope_t)); }
                     ~~~~~~
)BT");
}

TEST(Types, OffsetofFields) {
  EXPECT_EQ(diagnostics(
                "struct T { int a; struct { char b; long c; } in; } BEGIN { "
                "print((offsetof(struct T, a), offsetof(struct T, in.c))); }"),
            "");
}

TEST(Types, OffsetofUnknownField) {
  EXPECT_EQ(diagnostics(
                "struct T { int a; } BEGIN { print(offsetof(struct T, z)); }"),
            R"BT(stdin:1:35-56: ERROR: 'struct T' has no field named 'z'
struct T { int a; } BEGIN { print(offsetof(struct T, z)); }
                                  ~~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, OffsetofOfANonStruct) {
  EXPECT_EQ(diagnostics("BEGIN { print(offsetof(uint64, a)); }"),
            R"BT(stdin:1:15-34: ERROR: offsetof() needs a struct, not 'uint64'
BEGIN { print(offsetof(uint64, a)); }
              ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, IntegerLiteralTooSmall) {
  EXPECT_EQ(
      diagnostics("BEGIN { $x = -9223372036854775809; }"),
      R"BT(stdin:1:14-34: ERROR: integer literal is too small: -9223372036854775809
BEGIN { $x = -9223372036854775809; }
             ~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Types, BooleanArithmetic) {
  EXPECT_EQ(
      diagnostics("BEGIN { $x = true + 1; $y = !true; $z = true == false; }"),
      "");
}

TEST(Types, RecordsAreTypedByName) {
  EXPECT_EQ(typed_body("$r = (a = 1, b = \"x\"); print($r.b);"), R"(=
 variable: $r :: [record { .a = int8, .b = string[2] }]
 record: :: [record { .a = int8, .b = string[2] }]
  a =
   int: 1 :: [int8]
  b =
   string: x :: [string[2]]
call: print :: [void]
 .b :: [string[2]]
  variable: $r :: [record { .a = int8, .b = string[2] }]
)");
}

TEST(Types, ArithmeticTypes) {
  EXPECT_EQ(
      typed_body("$a = (uint32)1 + (uint32)2; $b = (uint64)1 - (uint64)2; "
                 "$c = (int8)-1 * 3; $d = ~(uint16)1; $e = !5; $f = 1 < 2;"),
      R"(=
 variable: $a :: [uint64]
 + :: [uint64]
  (uint32) :: [uint32]
   int: 1 :: [int8]
  (uint32) :: [uint32]
   int: 2 :: [int8]
=
 variable: $b :: [int64]
 - :: [int64]
  (uint64) :: [uint64]
   int: 1 :: [int8]
  (uint64) :: [uint64]
   int: 2 :: [int8]
=
 variable: $c :: [int64]
 * :: [int64]
  (int8) :: [int8]
   int: -1 :: [int8]
  int: 3 :: [int8]
=
 variable: $d :: [uint16]
 ~ :: [uint16]
  (uint16) :: [uint16]
   int: 1 :: [int8]
=
 variable: $e :: [bool]
 ! :: [bool]
  int: 5 :: [int8]
=
 variable: $f :: [bool]
 < :: [bool]
  int: 1 :: [int8]
  int: 2 :: [int8]
)");
}

TEST(Types, SizeofAndOffsetofValues) {
  Frontend f =
      analyse("struct T { char a; long b; struct { char c; int d; } in; }\n"
              "BEGIN { $s = sizeof(struct T); $o = offsetof(struct T, in.d); "
              "$p = sizeof(int32 *); $q = sizeof(\"abc\"); }");
  ASSERT_TRUE(f.ok) << f.diags();
  auto &stmts = f.ctx->root->probes[0]->body->stmts;
  auto value = [&](size_t i) -> uint64_t {
    auto *a = ast::dyn_cast<ast::AssignVar>(stmts[i]);
    if (auto *s = ast::dyn_cast<ast::Sizeof>(a->value))
      return s->value;
    return ast::dyn_cast<ast::Offsetof>(a->value)->value;
  };
  struct T {
    char a;
    long b;
    struct {
      char c;
      int d;
    } in;
  };
  EXPECT_EQ(value(0), sizeof(T));
  EXPECT_EQ(value(1), offsetof(T, in.d));
  EXPECT_EQ(value(2), 8u);
  EXPECT_EQ(value(3), 4u);
}

} // namespace
} // namespace ubtrace::test
