// The grammar of statements in both dialects: assignments and compound
// assignments, `let`, if/else, while, unroll, the two `for` forms,
// break/continue/return, discards, delete in both spellings, and blocks.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(Assignments, VariablesAndMaps) {
  EXPECT_EQ(body_tree("$x = 1; @m = 2; @k[1, 2] = 3;"), R"(=
 variable: $x
 int: 1
=
 map: @m
 int: 2
=
 map: @k
  int: 1
  int: 2
 int: 3
)");
}

TEST(Assignments, CompoundOperatorsExpand) {
  // $x op= e is $x = $x op e.
  EXPECT_EQ(body_tree("$x += 1; @m -= 2; $x *= 3; $x /= 4; $x %= 5; "
                      "$x &= 6; $x |= 7; $x ^= 8; $x <<= 9; @m[0] >>= 10;"),
            R"(=
 variable: $x
 +
  variable: $x
  int: 1
=
 map: @m
 -
  map: @m
  int: 2
=
 variable: $x
 *
  variable: $x
  int: 3
=
 variable: $x
 /
  variable: $x
  int: 4
=
 variable: $x
 %
  variable: $x
  int: 5
=
 variable: $x
 &
  variable: $x
  int: 6
=
 variable: $x
 |
  variable: $x
  int: 7
=
 variable: $x
 ^
  variable: $x
  int: 8
=
 variable: $x
 <<
  variable: $x
  int: 9
=
 map: @m
  int: 0
 >>
  map: @m
   int: 0
  int: 10
)");
}

TEST(Assignments, CompoundFlagIsKept) {
  Frontend f = parse_only("BEGIN { $x += 1; @m[1] |= 2; $y = 3; }");
  ASSERT_TRUE(f.parsed) << f.diags();
  auto &stmts = f.ctx->root->probes[0]->body->stmts;
  EXPECT_TRUE(ast::dyn_cast<ast::AssignVar>(stmts[0])->compound);
  EXPECT_TRUE(ast::dyn_cast<ast::AssignMap>(stmts[1])->compound);
  EXPECT_FALSE(ast::dyn_cast<ast::AssignVar>(stmts[2])->compound);
}

TEST(Assignments, DiscardWithUnderscore) {
  EXPECT_EQ(body_tree("_ = has_key(@m, 1);"), R"(_ =
 call: has_key
  map: @m
  int: 1
)");
}

TEST(Assignments, OnlyVariablesMapsAndUnderscore) {
  EXPECT_EQ(
      parse_tree("BEGIN { pid = 1; }"),
      R"(stdin:1:9-12: ERROR: cannot assign to 'pid': only variables ($x), maps (@x) and '_' can be assigned
BEGIN { pid = 1; }
        ~~~
)");
}

TEST(Let, AllForms) {
  EXPECT_EQ(body_tree("let $a; let $b = 1; let $c: uint32; "
                      "let $d: string[8] = \"x\"; let $e: struct foo * = 0;"),
            R"(let $a
let $b
 int: 1
let $c: uint32
let $d: string[8]
 string: x
let $e: struct foo *
 int: 0
)");
}

TEST(Let, TypeofAnnotation) {
  EXPECT_EQ(body_tree("$a = 1; let $b: typeof($a) = 2;"), R"(=
 variable: $a
 int: 1
let $b: typeof(...)
 int: 2
)");
}

TEST(If, ElseIfChainsNest) {
  EXPECT_EQ(body_tree("if ($a) { $b = 1; } else if ($c) { $d = 2; } "
                      "else { $e = 3; }"),
            R"(if
 variable: $a
 then
  =
   variable: $b
   int: 1
 else
  if
   variable: $c
   then
    =
     variable: $d
     int: 2
   else
    =
     variable: $e
     int: 3
)");
}

TEST(If, WithoutElseAndEmptyBody) {
  EXPECT_EQ(body_tree("if (1) { } if (2) { ; ; }"), R"(if
 int: 1
 then
if
 int: 2
 then
)");
}

TEST(If, BlocksAreRequired) {
  EXPECT_EQ(parse_tree("BEGIN { if (1) $x = 1; }"),
            R"(stdin:1:16-18: ERROR: syntax error, unexpected variable
BEGIN { if (1) $x = 1; }
               ~~
)");
}

TEST(Loops, WhileAndUnroll) {
  EXPECT_EQ(body_tree("while ($i < 3) { $i++; continue; } "
                      "unroll (2) { break; }"),
            R"(while
 <
  variable: $i
  int: 3
 ++ (post)
  variable: $i
 continue
unroll
 int: 2
 break
)");
}

TEST(Loops, HeadersWithoutParentheses) {
  // 0.26 takes `for $x : ...`, `while $c`, `unroll 3` and `if $c`.
  EXPECT_EQ(body_tree("for $kv : @m { } for $i : 0..5 { } while $i { } "
                      "unroll 3 { } if $i { } else if ($i) { }"),
            R"(for $kv
 map: @m
 body
for $i
 int: 0
 int: 5
 body
while
 variable: $i
unroll
 int: 3
if
 variable: $i
 then
 else
  if
   variable: $i
   then
)");
}

TEST(Loops, ForOverAMap) {
  EXPECT_EQ(body_tree("for ($kv : @m) { print($kv.0); }"), R"(for $kv
 map: @m
 body
  call: print
   .0
    variable: $kv
)");
}

TEST(Loops, ForOverARange) {
  EXPECT_EQ(body_tree("for ($i : 0..10) { } for ($j : $a + 1 .. ncpus) { }"),
            R"(for $i
 int: 0
 int: 10
 body
for $j
 +
  variable: $a
  int: 1
 identifier: ncpus
 body
)");
}

TEST(Loops, ForOverASubscriptedMapParses) {
  // Semantic analysis rejects it (a for loop iterates a whole map).
  EXPECT_EQ(parse_tree("BEGIN { for ($kv : @m[1]) { } }"), R"(Program
 BEGIN
  for $kv
   map: @m
    int: 1
   body
)");
}

TEST(Loops, RangeEndsAreExpressions) {
  EXPECT_EQ(parse_tree("BEGIN { for ($i : 0..) { } }"),
            R"(stdin:1:22-23: ERROR: syntax error, unexpected )
BEGIN { for ($i : 0..) { } }
                     ~
)");
}

TEST(Jumps, ReturnWithAndWithoutValue) {
  EXPECT_EQ(body_tree("return; return 1 + 2;"), R"(return
return
 +
  int: 1
  int: 2
)");
}

TEST(Delete, BothDialects) {
  EXPECT_EQ(body_tree("delete(@m[1]); delete(@m, 1); delete(@n[1, 2]); "
                      "delete(@n, (1, 2));"),
            R"(call: delete
 map: @m
  int: 1
call: delete
 map: @m
 int: 1
call: delete
 map: @n
  int: 1
  int: 2
call: delete
 map: @n
 tuple:
  int: 1
  int: 2
)");
}

TEST(Blocks, NestedBlocksAndEmptyStatements) {
  EXPECT_EQ(body_tree("{ $x = 1; { $y = 2; } } ;;"), R"(=
 variable: $x
 int: 1
=
 variable: $y
 int: 2
)");
}

TEST(Blocks, LastStatementNeedsNoSemicolon) {
  EXPECT_EQ(body_tree("$x = 1; print($x)"), R"(=
 variable: $x
 int: 1
value
 call: print
  variable: $x
)");
  EXPECT_EQ(body_tree("$x = 1"), R"(=
 variable: $x
 int: 1
)");
}

TEST(Blocks, MissingSemicolonBetweenStatements) {
  EXPECT_EQ(
      parse_tree("BEGIN { $x = 1 $y = 2; }"),
      R"(stdin:1:16-18: ERROR: syntax error, unexpected variable, expecting }
BEGIN { $x = 1 $y = 2; }
               ~~
)");
}

TEST(Blocks, ClassicDialectProbe) {
  EXPECT_EQ(parse_tree(R"(BEGIN
{
  printf("Tracing... Hit Ctrl-C to end.\n");
}

uprobe:/bin/bash:readline
/pid != 0/
{
  @start[tid] = nsecs;
  $p = (struct foo *)arg0;
  @len = $p->len;
}

END
{
  clear(@start);
  delete(@len);
}
)"),
            R"(Program
 BEGIN
  call: printf
   string: Tracing... Hit Ctrl-C to end.

 uprobe:/bin/bash:readline
  predicate
   !=
    identifier: pid
    int: 0
  =
   map: @start
    identifier: tid
   identifier: nsecs
  =
   variable: $p
   (struct foo *)
    identifier: arg0
  =
   map: @len
   ->len
    variable: $p
 END
  call: clear
   map: @start
  call: delete
   map: @len
)");
}

TEST(Blocks, CurrentDialectProbe) {
  EXPECT_EQ(
      parse_tree(R"(begin {
  let @sizes = 0;
}
)"),
      R"(stdin:2:7-13: ERROR: syntax error, unexpected map, expecting variable
  let @sizes = 0;
      ~~~~~~
)");
  EXPECT_EQ(parse_tree(R"(let @bytes = lruhash(100);
uprobe:libc:malloc {
  let $sz = arg0;
  @bytes[tid] = $sz;
  for ($kv : @bytes) {
    if ($kv.1 > 1000) { break; }
  }
  $p = (struct s *)arg1;
  print($p.field);
  delete(@bytes, tid);
}
end { print(@bytes); }
)"),
            R"(Program
 let @bytes =
  call: lruhash
   int: 100
 uprobe:libc:malloc
  let $sz
   identifier: arg0
  =
   map: @bytes
    identifier: tid
   variable: $sz
  for $kv
   map: @bytes
   body
    if
     >
      .1
       variable: $kv
      int: 1000
     then
      break
  =
   variable: $p
   (struct s *)
    identifier: arg1
  call: print
   .field
    variable: $p
  call: delete
   map: @bytes
   identifier: tid
 end
  call: print
   map: @bytes
)");
}

} // namespace
} // namespace ubtrace::test
