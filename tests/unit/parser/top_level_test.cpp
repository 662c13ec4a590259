// The top level of a script: attach point lists as raw words (paths,
// wildcards, quoted C++ names), predicates (with division inside), config
// blocks, macros, fn, map declarations, imports, C definitions and the
// order bpftrace requires of them.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

// The raw attach points of every probe, one per line.
std::string raw_attach_points(const std::string &src) {
  Frontend f = parse_only(src);
  if (!f.parsed)
    return f.diags();
  std::string out;
  for (auto *p : f.ctx->root->probes)
    for (auto *ap : p->attach_points)
      out += ap->raw + "\n";
  return out;
}

TEST(AttachPoints, RawWordsKeepPathsWildcardsAndQuotes) {
  EXPECT_EQ(raw_attach_points(R"BT(uprobe:/bin/bash:readline,
uretprobe:/lib/x86_64-linux-gnu/libc.so.6:mal*,
u:libc:"fopen64", uprobe:./app:"ns::Klass::method(int)",
uprobe:./app:cpp:"ns::f", usdt:./app:prov:probe,
uprobe:"/path with spaces/app":main,
kernel:./app:_Z6vecAddPfS_S_i, kernelret::vec*,
interval:s:1, i:ms:100, interval:1s,
BEGIN, END, begin, end { })BT"),
            R"BT(uprobe:/bin/bash:readline
uretprobe:/lib/x86_64-linux-gnu/libc.so.6:mal*
u:libc:"fopen64"
uprobe:./app:"ns::Klass::method(int)"
uprobe:./app:cpp:"ns::f"
usdt:./app:prov:probe
uprobe:"/path with spaces/app":main
kernel:./app:_Z6vecAddPfS_S_i
kernelret::vec*
interval:s:1
i:ms:100
interval:1s
BEGIN
END
begin
end
)BT");
}

TEST(AttachPoints, OffsetsAddressesAndPositionals) {
  EXPECT_EQ(raw_attach_points("uprobe:/bin/x:f+0x10, uprobe:/bin/x:0x401000, "
                              "uprobe:$1:main, probe_name=uprobe:/bin/x:g {}"),
            R"(uprobe:/bin/x:f+0x10
uprobe:/bin/x:0x401000
uprobe:$1:main
probe_name=uprobe:/bin/x:g
)");
}

TEST(AttachPoints, TrailingCommaIsAllowed) {
  EXPECT_EQ(raw_attach_points("BEGIN, END, { }"), "BEGIN\nEND\n");
}

TEST(AttachPoints, SlashBeforeTheFirstColonOpensThePredicate) {
  EXPECT_EQ(parse_tree("BEGIN/1/{ }"), R"(Program
 BEGIN
  predicate
   int: 1
)");
  EXPECT_EQ(raw_attach_points("uprobe:/a/b:f/1/{ }"), "uprobe:/a/b:f/1/\n");
}

TEST(AttachPoints, OneProbePerBody) {
  Frontend f =
      parse_only("BEGIN { } uprobe:/bin/x:f, uprobe:/bin/x:g { } END {}");
  ASSERT_TRUE(f.parsed) << f.diags();
  ASSERT_EQ(f.ctx->root->probes.size(), 3u);
  EXPECT_EQ(f.ctx->root->probes[1]->attach_points.size(), 2u);
}

TEST(AttachPoints, LocationsOfEachWord) {
  Frontend f = parse_only("BEGIN,\n  uprobe:/bin/x:f {}");
  ASSERT_TRUE(f.parsed);
  auto &aps = f.ctx->root->probes[0]->attach_points;
  EXPECT_EQ(aps[0]->loc.str(), "stdin:1:1-6");
  EXPECT_EQ(aps[1]->loc.str(), "stdin:2:3-18");
}

TEST(AttachPoints, MissingBody) {
  EXPECT_EQ(
      parse_tree("BEGIN"),
      R"(stdin:1:1-6: ERROR: syntax error, unexpected end of file, expecting {
BEGIN
~~~~~
)");
  EXPECT_EQ(
      parse_tree("BEGIN END { }"),
      R"(stdin:1:7-10: ERROR: syntax error, unexpected attach point, expecting {
BEGIN END { }
      ~~~
)");
}

TEST(Predicates, DivisionInsideAPredicate) {
  EXPECT_EQ(parse_tree("BEGIN /10 / 2 == 5/ { }"), R"(Program
 BEGIN
  predicate
   ==
    /
     int: 10
     int: 2
    int: 5
)");
}

TEST(Predicates, DivisionInsideParenthesesAndCalls) {
  EXPECT_EQ(parse_tree("BEGIN /(arg0 / 2) > f(4 / 2)/ { }"), R"(Program
 BEGIN
  predicate
   >
    /
     identifier: arg0
     int: 2
    call: f
     /
      int: 4
      int: 2
)");
}

TEST(Predicates, SpansLines) {
  EXPECT_EQ(parse_tree("uprobe:/bin/x:f\n/pid == 1 &&\n tid == 2/\n{ }"),
            R"(Program
 uprobe:/bin/x:f
  predicate
   &&
    ==
     identifier: pid
     int: 1
    ==
     identifier: tid
     int: 2
)");
}

TEST(Predicates, BlockExpressionInsideAPredicate) {
  EXPECT_EQ(parse_tree("BEGIN /{ 1 }/ { }"), R"(Program
 BEGIN
  predicate
   block expression
    value
     int: 1
)");
}

TEST(Predicates, Unterminated) {
  EXPECT_EQ(parse_tree("BEGIN /pid == 1 { }"),
            R"(stdin:1:17-18: ERROR: syntax error, unexpected {
BEGIN /pid == 1 { }
                ~
)");
}

TEST(Config, Values) {
  EXPECT_EQ(parse_tree("config = { max_strlen = 128; stack_mode = perf; "
                       "license = \"MIT\"; print_maps_on_exit = false; } "
                       "BEGIN { }"),
            R"(Program
 config max_strlen =
  int: 128
 config stack_mode =
  identifier: perf
 config license =
  string: MIT
 config print_maps_on_exit =
  bool: false
 BEGIN
)");
}

TEST(Config, EmptyAndWithoutTrailingSemicolon) {
  EXPECT_EQ(parse_tree("config = {} config = { max_strlen = 1 } BEGIN {}"),
            R"(stdin:1:13-19: ERROR: duplicate config block
config = {} config = { max_strlen = 1 } BEGIN {}
            ~~~~~~
)");
  EXPECT_EQ(parse_tree("config = { BPFTRACE_MAX_STRLEN = 1 } BEGIN {}"),
            R"(Program
 config BPFTRACE_MAX_STRLEN =
  int: 1
 BEGIN
)");
}

TEST(Macros, ParametersOfEachKind) {
  EXPECT_EQ(parse_tree("macro add($a, @b, c) { $a + c } "
                       "macro one() { 1 } macro two { 2 } BEGIN { }"),
            R"(Program
 BEGIN
 macro add($a, @b, c)
  value
   +
    variable: $a
    identifier: c
 macro one()
  value
   int: 1
 macro two()
  value
   int: 2
)");
}

TEST(Functions, SignatureAndBody) {
  EXPECT_EQ(
      parse_tree("fn add($a: int64, $b: uint8): int64 { return $a + $b; } "
                 "fn nothing(): void { } BEGIN { }"),
      R"(Program
 fn add($a: int64, $b: uint8): int64
  return
   +
    variable: $a
    variable: $b
 fn nothing(): void
 BEGIN
)");
}

TEST(Functions, ReturnTypeIsRequired) {
  EXPECT_EQ(parse_tree("fn f() { }"),
            R"(stdin:1:8-9: ERROR: syntax error, unexpected {, expecting :
fn f() { }
       ~
)");
}

TEST(MapDeclarations, AtTheTopLevel) {
  EXPECT_EQ(parse_tree("let @a = hash(10); let @b = lruhash(5); BEGIN { }"),
            R"(Program
 let @a =
  call: hash
   int: 10
 let @b =
  call: lruhash
   int: 5
 BEGIN
)");
}

TEST(MapDeclarations, OnlyMapsAtTheTopLevel) {
  EXPECT_EQ(
      parse_tree("let $x = 1; BEGIN { }"),
      R"(stdin:1:5-7: ERROR: root-level let statements need to be map declarations, e.g. let @a = hash(2);
let $x = 1; BEGIN { }
    ~~
)");
}

// One file's tree, without resolving its imports (tests/unit/passes has
// the import tests, with files).
std::string file_tree(const std::string &src) {
  ast::ASTContext ctx("stdin", src);
  ast::Program *p = parser::parse_source(ctx, ctx.source());
  if (!p || !ctx.diags().ok())
    return ctx.diags().str();
  std::ostringstream os;
  ast::print_ast(os, *p, false);
  return os.str();
}

TEST(Imports, Parsed) {
  ast::ASTContext ctx("stdin",
                      R"(import "lib.bt"; import "other.bt"; BEGIN { })");
  ast::Program *p = parser::parse_source(ctx, ctx.source());
  ASSERT_NE(p, nullptr) << ctx.diags().str();
  ASSERT_EQ(p->imports.size(), 2u);
  EXPECT_EQ(p->imports[0]->path, "lib.bt");
  EXPECT_EQ(p->imports[1]->path, "other.bt");
}

TEST(CDefinitions, IncludeDefineAndTypes) {
  EXPECT_EQ(parse_tree(R"(#include <linux/sched.h>
#define MAX 10
struct Foo { int a; struct { char b; } inner; }
union U { int i; long l; };
enum E { A, B = 2 };
typedef unsigned int u32_t;
BEGIN { })"),
            R"(Program
 C definition: #include <linux/sched.h>
 C definition: #define MAX 10
 C definition: struct Foo { int a; struct { char b; } inner; }
 C definition: union U { int i; long l; }
 C definition: enum E { A, B = 2 }
 C definition: typedef unsigned int u32_t;
 BEGIN
)");
}

TEST(CDefinitions, Forms) {
  Frontend f = parse_only(
      "#include \"x.h\"\n#define A 1\nstruct S { int a; }\nBEGIN {}");
  ASSERT_TRUE(f.parsed) << f.diags();
  auto &defs = f.ctx->root->c_definitions;
  ASSERT_EQ(defs.size(), 3u);
  EXPECT_EQ(defs[0]->form, ast::CDefinition::Form::Include);
  EXPECT_EQ(defs[1]->form, ast::CDefinition::Form::Define);
  EXPECT_EQ(defs[2]->form, ast::CDefinition::Form::Definition);
}

TEST(CDefinitions, Unterminated) {
  EXPECT_EQ(parse_tree("struct Foo { int a;"),
            R"(stdin:1:1-7: ERROR: unterminated C definition
struct Foo { int a;
~~~~~~
)");
}

TEST(CDefinitions, UnknownPreprocessorDirective) {
  EXPECT_EQ(parse_tree("#if FOO\nBEGIN { }"),
            R"(stdin:1:1-8: ERROR: unknown preprocessor directive
#if FOO
~~~~~~~
)");
}

TEST(CDefinitions, IfdefReadsOnlyTheBranchTheDefinitionsSelect) {
  // Nothing defines BPFTRACE_HAVE_BTF here: the #ifndef branch is read.
  EXPECT_EQ(parse_tree("#ifndef BPFTRACE_HAVE_BTF\nstruct a { int x; };\n"
                       "#else\nstruct b { int y; };\n#endif\nBEGIN { }"),
            parse_tree("struct a { int x; };\nBEGIN { }"));
  EXPECT_EQ(parse_tree("#define FOO 1\n#ifdef FOO\nstruct a { int x; };\n"
                       "#ifdef BAR\n#ifdef FOO\nstruct c { int z; };\n#endif\n"
                       "#else\nstruct d { int w; };\n#endif\n"
                       "#else\nstruct b { int y; };\n#endif\nBEGIN { }"),
            parse_tree("#define FOO 1\nstruct a { int x; };\n"
                       "struct d { int w; };\nBEGIN { }"));
}

TEST(CDefinitions, UnbalancedConditionalsAreLocatedErrors) {
  EXPECT_EQ(parse_tree("#ifdef FOO\nBEGIN { }"),
            R"(stdin:1:1-11: ERROR: unterminated #if
#ifdef FOO
~~~~~~~~~~
)");
  EXPECT_EQ(parse_tree("#endif\nBEGIN { }"),
            R"(stdin:1:1-7: ERROR: #endif without #ifdef or #ifndef
#endif
~~~~~~
)");
}

TEST(Order, CDefinitionsComeFirst) {
  EXPECT_EQ(
      parse_tree("BEGIN { }\nstruct Foo { int a; }"),
      R"(stdin:2:1-22: ERROR: C definitions must appear before probes and functions
struct Foo { int a; }
~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      parse_tree("config = { max_strlen = 8 }\n#include <a.h>\nBEGIN { }"),
      R"(stdin:2:1-15: ERROR: C definitions must appear before probes and functions
#include <a.h>
~~~~~~~~~~~~~~
)");
}

TEST(Order, ConfigAndImportsBeforeProbes) {
  EXPECT_EQ(
      parse_tree("BEGIN { }\nconfig = { max_strlen = 8 }"),
      R"(stdin:2:1-7: ERROR: config must appear before probes and functions
config = { max_strlen = 8 }
~~~~~~
)");
  EXPECT_EQ(
      parse_tree("macro m() { 1 }\nimport \"x.bt\";"),
      R"(stdin:2:1-7: ERROR: root imports must appear before probes and functions
import "x.bt";
~~~~~~
)");
  // Config and imports come in any order among themselves.
  EXPECT_EQ(file_tree("import \"x.bt\"; config = { max_strlen = 8 } "
                      "import \"y.bt\"; BEGIN { }"),
            R"(Program
 config max_strlen =
  int: 8
 import x.bt
 import y.bt
 BEGIN
)");
}

TEST(Order, ProbesMacrosFunctionsAndMapsMix) {
  Frontend f = parse_only("BEGIN { } macro m() { 1 } let @a = hash(2); "
                          "fn f(): void { } END { }");
  EXPECT_TRUE(f.parsed) << f.diags();
}

TEST(Empty, EmptyScriptsParse) {
  EXPECT_EQ(parse_tree(""), "Program\n");
  EXPECT_EQ(parse_tree("  \n// just a comment\n"), "Program\n");
  EXPECT_EQ(parse_tree(";;"), "Program\n");
}

} // namespace
} // namespace ubtrace::test
