// Semantic analysis of maps: definitions and reads across probes, key
// and value consistency, scalar against keyed use, aggregations and their
// parameters, for loops over maps, and map declarations.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(Maps, UndefinedMap) {
  EXPECT_EQ(diagnostics("BEGIN { print(@nope); }"),
            R"BT(stdin:1:15-20: ERROR: Undefined map: @nope
BEGIN { print(@nope); }
              ~~~~~
)BT");
}

TEST(Maps, UndefinedMapInAnExpression) {
  EXPECT_EQ(diagnostics("BEGIN { $x = @nope + 1; }"),
            R"BT(stdin:1:14-19: ERROR: Undefined map: @nope
BEGIN { $x = @nope + 1; }
             ~~~~~
)BT");
}

TEST(Maps, MapReadBeforeAssignedInAnotherProbe) {
  EXPECT_EQ(diagnostics("BEGIN { $x = @later; } END { @later = 1; }"), "");
}

TEST(Maps, KeyTypeMismatch) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 1; @m[\"a\"] = 2; }"),
      R"BT(stdin:1:20-27: ERROR: Argument mismatch for @m: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'
BEGIN { @m[1] = 1; @m["a"] = 2; }
                   ~~~~~~~
)BT");
}

TEST(Maps, KeyCountMismatch) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1, \"a\"] = 1; @m[3] = 3; }"),
      R"BT(stdin:1:25-30: ERROR: Argument mismatch for @m: trying to access with arguments: 'int8' when map expects arguments: '(int8,string[2])'
BEGIN { @m[1, "a"] = 1; @m[3] = 3; }
                        ~~~~~
)BT");
}

TEST(Maps, TupleKeyIsMultipleKeys) {
  EXPECT_EQ(
      diagnostics("BEGIN { @n[(1, 2)] = 1; @n[3, 4] = 2; print(@n[5, 6]); }"),
      "");
}

TEST(Maps, IntegerKeysWiden) {
  EXPECT_EQ(diagnostics("BEGIN { @o[1] = 1; @o[(uint8)2] = 2; @o[-1] = 3; "
                        "@o[(uint32)4] = 4; }"),
            "");
}

TEST(Maps, StringKeysOfAnyLength) {
  EXPECT_EQ(diagnostics("BEGIN { @p[\"ab\"] = 1; @p[\"abcdef\"] = 2; }"), "");
}

TEST(Maps, ValueTypeMismatch) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 1; @m[2] = \"a\"; }"),
      R"BT(stdin:1:20-25: ERROR: Type mismatch for @m: trying to assign value of type 'string[2]' when map already contains a value of type 'int64'
BEGIN { @m[1] = 1; @m[2] = "a"; }
                   ~~~~~
)BT");
}

TEST(Maps, AggregationThenValue) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m = count(); @m = 1; }"),
      R"BT(stdin:1:23-25: ERROR: Type mismatch for @m: trying to assign value of type 'int64' when map already contains a value of type 'count_t'
BEGIN { @m = count(); @m = 1; }
                      ~~
)BT");
}

TEST(Maps, ValueThenAggregation) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m = 1; @m = count(); }"),
      R"BT(stdin:1:17-19: ERROR: Type mismatch for @m: trying to assign value of type 'count_t' when map already contains a value of type 'int64'
BEGIN { @m = 1; @m = count(); }
                ~~
)BT");
}

TEST(Maps, DifferentAggregations) {
  EXPECT_EQ(
      diagnostics("BEGIN { @v = count(); @v = sum(1); }"),
      R"BT(stdin:1:23-25: ERROR: Type mismatch for @v: trying to assign value of type 'sum_t' when map already contains a value of type 'count_t'
BEGIN { @v = count(); @v = sum(1); }
                      ~~
)BT");
}

TEST(Maps, HistParametersMustAgree) {
  EXPECT_EQ(
      diagnostics("BEGIN { @t = hist(1, 2); @t = hist(1, 3); }"),
      R"BT(stdin:1:26-28: ERROR: @t already holds a hist_t with other parameters
BEGIN { @t = hist(1, 2); @t = hist(1, 3); }
                         ~~
)BT");
}

TEST(Maps, LhistParametersMustAgree) {
  EXPECT_EQ(
      diagnostics(
          "BEGIN { @u = lhist(1, 0, 10, 1); @u = lhist(1, 0, 20, 1); }"),
      R"BT(stdin:1:34-36: ERROR: @u already holds a lhist_t with other parameters
BEGIN { @u = lhist(1, 0, 10, 1); @u = lhist(1, 0, 20, 1); }
                                 ~~
)BT");
}

TEST(Maps, SignedAndUnsignedSumsMix) {
  EXPECT_EQ(diagnostics("BEGIN { @s = sum((uint32)1); @s = sum(-1); }"), "");
}

TEST(Maps, ScalarThenKeyed) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a = 1; @a[1] = 2; }"),
      R"BT(stdin:1:17-22: ERROR: @a used as a map with an explicit key (non-scalar map), previously used without an explicit key (scalar map)
BEGIN { @a = 1; @a[1] = 2; }
                ~~~~~
)BT");
}

TEST(Maps, KeyedThenScalar) {
  EXPECT_EQ(
      diagnostics("BEGIN { @x[1] = 1; @x = 2; }"),
      R"BT(stdin:1:20-22: ERROR: @x used as a map without an explicit key (scalar map), previously used with an explicit key (non-scalar map)
BEGIN { @x[1] = 1; @x = 2; }
                   ~~
)BT");
}

TEST(Maps, KeyedThenScalarRead) {
  EXPECT_EQ(
      diagnostics("BEGIN { @x[1] = 1; $y = @x; }"),
      R"BT(stdin:1:25-27: ERROR: @x used as a map without an explicit key (scalar map), previously used with an explicit key (non-scalar map)
BEGIN { @x[1] = 1; $y = @x; }
                        ~~
)BT");
}

TEST(Maps, HistogramsCannotBeKeys) {
  EXPECT_EQ(diagnostics("BEGIN { @h = hist(1); @q[@h] = 1; }"),
            R"BT(stdin:1:26-28: ERROR: hist_t cannot be part of a map key
BEGIN { @h = hist(1); @q[@h] = 1; }
                         ~~
)BT");
}

TEST(Maps, HistogramsCannotBeVariables) {
  EXPECT_EQ(
      diagnostics("BEGIN { @h = hist(1); $w = @h; }"),
      R"BT(stdin:1:23-30: ERROR: Value of type 'hist_t' cannot be assigned to $w: aggregations only live in maps
BEGIN { @h = hist(1); $w = @h; }
                      ~~~~~~~
)BT");
}

TEST(Maps, VoidCannotBeAKey) {
  EXPECT_EQ(diagnostics("BEGIN { @q[print(1)] = 1; }"),
            R"BT(stdin:1:12-20: ERROR: void cannot be part of a map key
BEGIN { @q[print(1)] = 1; }
           ~~~~~~~~
)BT");
}

TEST(Maps, VoidCannotBeAValue) {
  EXPECT_EQ(
      diagnostics("BEGIN { @q = print(1); }"),
      R"BT(stdin:1:9-11: ERROR: Value of type void cannot be assigned to @q
BEGIN { @q = print(1); }
        ~~
)BT");
}

TEST(Maps, ForOverASubscriptedMap) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 2; for ($kv : @m[1]) { } }"),
      R"BT(stdin:1:31-36: ERROR: for loops iterate over a whole map: use @m
BEGIN { @m[1] = 2; for ($kv : @m[1]) { } }
                              ~~~~~
)BT");
}

TEST(Maps, ForOverAScalarMap) {
  EXPECT_EQ(
      diagnostics("BEGIN { @s = 1; for ($kv : @s) { } }"),
      R"BT(stdin:1:28-30: ERROR: for loops need a keyed map; @s has no keys
BEGIN { @s = 1; for ($kv : @s) { } }
                           ~~
)BT");
}

TEST(Maps, ForOverAHistogram) {
  EXPECT_EQ(
      diagnostics("BEGIN { @h[1] = hist(1); for ($kv : @h) { } }"),
      R"BT(stdin:1:37-39: ERROR: for loops can not iterate over a map of hist_t
BEGIN { @h[1] = hist(1); for ($kv : @h) { } }
                                    ~~
)BT");
}

TEST(Maps, ForOverAnUndefinedMap) {
  EXPECT_EQ(diagnostics("BEGIN { for ($kv : @none) { } }"),
            R"BT(stdin:1:20-25: ERROR: Undefined map: @none
BEGIN { for ($kv : @none) { } }
                   ~~~~~
)BT");
}

TEST(Maps, MapDeclarationTypes) {
  EXPECT_EQ(
      diagnostics("let @a = hash(10); let @b = lruhash(5); let @c = "
                  "percpuhash(2); let @d = percpulruhash(3); BEGIN { @a[1] = "
                  "1; @b[1] = 1; @c[1] = count(); @d[1] = sum(1); }"),
      "");
}

TEST(Maps, MapDeclarationUnknownType) {
  EXPECT_EQ(diagnostics("let @c = stack(3); BEGIN { @c[1] = 1; }"),
            R"BT(stdin:1:10-18: ERROR: Invalid bpf map type: stack
let @c = stack(3); BEGIN { @c[1] = 1; }
         ~~~~~~~~
HINT: Valid map types: hash, lruhash, percpuhash, percpulruhash
)BT");
}

TEST(Maps, MapDeclarationNotACall) {
  EXPECT_EQ(
      diagnostics("let @d = 5; BEGIN { @d[1] = 1; }"),
      R"BT(stdin:1:10-11: ERROR: map declarations take a map type and its size, e.g. let @d = hash(100);
let @d = 5; BEGIN { @d[1] = 1; }
         ~
)BT");
}

TEST(Maps, MapDeclarationSize) {
  EXPECT_EQ(
      diagnostics("let @d = hash(0); BEGIN { @d[1] = 1; }"),
      R"BT(stdin:1:10-17: ERROR: hash() takes the maximum number of entries, a positive integer literal
let @d = hash(0); BEGIN { @d[1] = 1; }
         ~~~~~~~
)BT");
}

TEST(Maps, MapDeclarationSizeMustBeLiteral) {
  EXPECT_EQ(
      diagnostics("let @d = hash(); BEGIN { @d[1] = 1; }"),
      R"BT(stdin:1:10-16: ERROR: hash() takes the maximum number of entries, a positive integer literal
let @d = hash(); BEGIN { @d[1] = 1; }
         ~~~~~~
)BT");
}

TEST(Maps, MapDeclaredTwice) {
  EXPECT_EQ(
      diagnostics("let @a = hash(10); let @a = hash(2); BEGIN { @a[1] = 1; }"),
      R"BT(stdin:1:24-26: ERROR: map @a is declared more than once
let @a = hash(10); let @a = hash(2); BEGIN { @a[1] = 1; }
                       ~~
)BT");
}

TEST(Maps, MapDeclarationAggregationNeedsPerCpu) {
  EXPECT_EQ(
      diagnostics("let @a = hash(10); BEGIN { @a[1] = count(); }"),
      R"BT(stdin:1:5-7: ERROR: Incompatible map types. Type from declaration: hash. Type from value/key type: percpuhash
let @a = hash(10); BEGIN { @a[1] = count(); }
    ~~
)BT");
}

TEST(Maps, MapDeclarationPerCpuNeedsAggregation) {
  EXPECT_EQ(
      diagnostics("let @b = percpuhash(5); BEGIN { @b[1] = 5; }"),
      R"BT(stdin:1:5-7: ERROR: Incompatible map types. Type from declaration: percpuhash. Type from value/key type: hash
let @b = percpuhash(5); BEGIN { @b[1] = 5; }
    ~~
)BT");
}

TEST(Maps, UnusedDeclaredMap) {
  EXPECT_EQ(diagnostics("let @u = lruhash(3); BEGIN { }"),
            R"BT(stdin:1:5-7: WARNING: Unused map: @u
let @u = lruhash(3); BEGIN { }
    ~~
)BT");
}

TEST(Maps, IncrementDefinesAMap) {
  EXPECT_EQ(diagnostics("BEGIN { @x++; @y[1]--; print((@x, @y[1])); }"), "");
}

TEST(Maps, CompoundAssignmentDefinesAMap) {
  EXPECT_EQ(diagnostics("BEGIN { @sum += 5; @per[pid] += 1; }"), "");
}

// What analysis tells code generation about each map.
TEST(Maps, MapInfo) {
  Frontend f =
      analyse("let @lru = lruhash(64);\n"
              "uprobe:/bin/x:f { @lru[tid] = nsecs; @c[comm, pid] = count(); "
              "@s = sum((uint32)arg0); @h = hist(arg1, 2); }\n"
              "END { print(@lru); }");
  ASSERT_TRUE(f.ok) << f.diags();
  const auto &maps = f.ctx->maps;
  ASSERT_EQ(maps.size(), 4u);
  const ast::MapInfo &lru = maps.at("@lru");
  EXPECT_EQ(ast::type_str(lru.key), "uint32");
  EXPECT_EQ(ast::type_str(lru.value), "uint64");
  EXPECT_TRUE(lru.keyed);
  EXPECT_FALSE(lru.scalar);
  EXPECT_EQ(lru.decl_kind, "lruhash");
  EXPECT_EQ(lru.max_entries, 64u);
  const ast::MapInfo &c = maps.at("@c");
  EXPECT_EQ(ast::type_str(c.key), "(string[16],uint32)");
  EXPECT_EQ(ast::type_str(c.value), "count_t");
  const ast::MapInfo &s = maps.at("@s");
  EXPECT_TRUE(s.scalar);
  EXPECT_TRUE(s.key.is_none());
  EXPECT_EQ(ast::type_str(s.value), "usum_t");
  const ast::MapInfo &h = maps.at("@h");
  EXPECT_EQ(h.value.hist_bits, 2u);
  EXPECT_EQ(h.first_use.str(), "stdin:2:87-89");
}

TEST(Maps, KeysWidenToTheirCommonType) {
  Frontend f = analyse("BEGIN { @k[(uint8)1] = 1; @k[(int32)-2] = 2; "
                       "@s[\"ab\"] = 1; @s[\"abcdef\"] = 2; "
                       "@l[1] = 1; @l[1000] = 2; @u[(uint8)3] = 1; "
                       "@u[200] = 2; }");
  ASSERT_TRUE(f.ok) << f.diags();
  // Integer keys keep their width, as in bpftrace: the smallest type that
  // holds every use, a literal taking the other side's sign.
  EXPECT_EQ(ast::type_str(f.ctx->maps.at("@k").key), "int32");
  EXPECT_EQ(ast::type_str(f.ctx->maps.at("@s").key), "string[7]");
  EXPECT_EQ(ast::type_str(f.ctx->maps.at("@l").key), "int16");
  EXPECT_EQ(ast::type_str(f.ctx->maps.at("@u").key), "uint16");
}

TEST(Maps, ValuesWidenToTheirCommonType) {
  Frontend f = analyse("BEGIN { @v = (uint8)1; @v = -1; @t = (1, \"a\"); "
                       "@t = (2, \"abc\"); @u = 5; @u = (uint64)7; }");
  ASSERT_TRUE(f.ok) << f.diags();
  EXPECT_EQ(ast::type_str(f.ctx->maps.at("@v").value), "int64");
  // A literal assigned first gives way to the unsigned value after it.
  EXPECT_EQ(ast::type_str(f.ctx->maps.at("@u").value), "uint64");
  EXPECT_EQ(ast::type_str(f.ctx->maps.at("@t").value), "(int8,string[4])");
}

// Integer values are stored 64 bits wide, keeping their sign.
TEST(Maps, TypesAreLearntFromLaterProbes) {
  EXPECT_EQ(typed_body("$x = @later + 1;", "END { @later = (uint32)1; } BEGIN"),
            R"(=
 variable: $x :: [uint64]
 + :: [uint64]
  map: @later :: [uint64]
  int: 1 :: [int8]
)");
}

TEST(Maps, ForLoopVariablesAreKeyValueTuples) {
  EXPECT_EQ(typed_body("@m[1, \"a\"] = (uint8)2; for ($kv : @m) { "
                       "print(($kv.0.1, $kv.1)); }"),
            R"(=
 map: @m :: [uint64]
  int: 1 :: [int8]
  string: a :: [string[2]]
 (uint8) :: [uint8]
  int: 2 :: [int8]
for $kv
 map: @m :: [uint64]
 body
  call: print :: [void]
   tuple: :: [(string[2],uint64)]
    .1 :: [string[2]]
     .0 :: [(int8,string[2])]
      variable: $kv :: [((int8,string[2]),uint64)]
    .1 :: [uint64]
     variable: $kv :: [((int8,string[2]),uint64)]
)");
}

} // namespace
} // namespace ubtrace::test
