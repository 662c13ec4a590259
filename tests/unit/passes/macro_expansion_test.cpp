// Macro expansion: calls with and without `!`, bare names of macros
// without parameters, the three parameter kinds, hygiene (variables a
// macro creates are its own, maps must be passed in), overloads by arity
// and kind, recursion, and argument mismatches.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

RunOptions upto_macros() {
  RunOptions o;
  o.last_pass = "macro-expansion";
  return o;
}

// The last probe's body after expansion, or the diagnostics.
std::string expanded(const std::string &src) {
  Frontend f = analyse(src, upto_macros());
  if (!f.ok)
    return f.diags();
  return last_probe_tree(f, false);
}

TEST(MacroExpansion, ExpressionParameterIsSubstituted) {
  EXPECT_EQ(expanded("macro add_one(x) { x + 1 } BEGIN { print(add_one(2)); }"),
            R"(call: print
 block expression
  value
   +
    int: 2
    int: 1
)");
}

TEST(MacroExpansion, BareNameAndBangCallOfAParameterlessMacro) {
  EXPECT_EQ(expanded("macro one() { 1 } BEGIN { $a = one; $b = one!(); "
                     "$c = one(); }"),
            R"(=
 variable: $a
 int: 1
=
 variable: $b
 int: 1
=
 variable: $c
 int: 1
)");
}

TEST(MacroExpansion, MacroWithoutParameterList) {
  EXPECT_EQ(expanded("macro two { 2 } BEGIN { print(two); }"), R"(call: print
 int: 2
)");
}

TEST(MacroExpansion, VariableAndMapParametersAreTheCallersOwn) {
  EXPECT_EQ(expanded("macro bump($a, @b) { $a += 1; @b += 1; } "
                     "BEGIN { $x = 1; @y = 2; bump($x, @y); }"),
            R"(=
 variable: $x
 int: 1
=
 map: @y
 int: 2
block expression
 =
  variable: $x
  +
   variable: $x
   int: 1
 =
  map: @y
  +
   map: @y
   int: 1
)");
}

TEST(MacroExpansion, VariablesTheMacroCreatesArePrivate) {
  EXPECT_EQ(expanded("macro f(x) { let $t = x; $t * 2 } "
                     "BEGIN { $t = 5; print(f($t)); print(f(1)); }"),
            R"(=
 variable: $t
 int: 5
call: print
 block expression
  let $t#f1
   block expression
    value
     variable: $t
  value
   *
    variable: $t#f1
    int: 2
call: print
 block expression
  let $t#f2
   int: 1
  value
   *
    variable: $t#f2
    int: 2
)");
}

TEST(MacroExpansion, VariablesTheMacroOnlyReadsAreTheCallers) {
  EXPECT_EQ(diagnostics("macro f() { $y } BEGIN { $y = 1; print(f()); }"), "");
  EXPECT_EQ(diagnostics("macro f() { $y } BEGIN { print(f()); }"),
            R"(stdin:1:13-15: ERROR: Undefined or undeclared variable: $y
macro f() { $y } BEGIN { print(f()); }
            ~~
stdin:1:32-35: ERROR: expanded from
macro f() { $y } BEGIN { print(f()); }
                               ~~~
)");
}

TEST(MacroExpansion, LoopVariablesArePrivate) {
  EXPECT_EQ(
      expanded("macro sum(n) { let $s = 0; for ($i : 0..n) { $s += $i; } $s } "
               "BEGIN { $i = 7; print(sum(3)); }"),
      R"(=
 variable: $i
 int: 7
call: print
 block expression
  let $s#sum1
   int: 0
  for $i#sum1
   int: 0
   int: 3
   body
    =
     variable: $s#sum1
     +
      variable: $s#sum1
      variable: $i#sum1
  value
   variable: $s#sum1
)");
}

TEST(MacroExpansion, VariablesAndMapsPassedAsExpressionsAreReadOnly) {
  // `x` bound to $a is `{ $a }`: x++ cannot change $a.
  EXPECT_EQ(
      diagnostics("macro f(x) { x++; x } BEGIN { $a = 1; print(f($a)); }"),
      R"(stdin:1:14-17: ERROR: The ++ operator must be applied to a map or variable
macro f(x) { x++; x } BEGIN { $a = 1; print(f($a)); }
             ~~~
stdin:1:45-50: ERROR: expanded from
macro f(x) { x++; x } BEGIN { $a = 1; print(f($a)); }
                                            ~~~~~
)");
  EXPECT_EQ(diagnostics("macro f(x) { x + 1 } BEGIN { @m = 1; print(f(@m)); }"),
            "");
}

TEST(MacroExpansion, ArgumentsMayHaveSideEffects) {
  EXPECT_EQ(
      expanded("macro twice(x) { x; x } BEGIN { twice({ printf(\"hi\") }); }"),
      R"(block expression
 block expression
  value
   call: printf
    string: hi
 value
  block expression
   value
    call: printf
     string: hi
)");
}

TEST(MacroExpansion, NestedMacros) {
  EXPECT_EQ(
      expanded("macro add_one(x) { x + 1 } macro add_two(x) { add_one(x) + 1 } "
               "BEGIN { print(add_two(1)); }"),
      R"(call: print
 block expression
  value
   +
    block expression
     value
      +
       int: 1
       int: 1
    int: 1
)");
}

TEST(MacroExpansion, MacroCallsInArguments) {
  EXPECT_EQ(expanded("macro inc(x) { x + 1 } BEGIN { print(inc(inc(0))); }"),
            R"(call: print
 block expression
  value
   +
    block expression
     value
      +
       int: 0
       int: 1
    int: 1
)");
}

TEST(MacroExpansion, VariableParameterPassedOn) {
  EXPECT_EQ(expanded("macro set($v) { $v = 5 } macro wrap($w) { set($w) } "
                     "BEGIN { $a = 0; wrap($a); }"),
            R"(=
 variable: $a
 int: 0
block expression
 value
  block expression
   =
    variable: $a
    int: 5
)");
}

TEST(MacroExpansion, OverloadsByArityAndKind) {
  EXPECT_EQ(expanded("macro f() { 0 } macro f($x) { 2 } macro f(x) { 1 } "
                     "macro f(x, y) { 3 } "
                     "BEGIN { $v = 0; print((f(), f(7), f($v), f(1, 2))); }"),
            R"(=
 variable: $v
 int: 0
call: print
 tuple:
  int: 0
  int: 1
  int: 2
  int: 3
)");
  // The more specific definition first wins for a variable.
  EXPECT_EQ(expanded("macro f($x) { 2 } macro f(x) { 1 } "
                     "BEGIN { $v = 0; print((f($v), f(7))); }"),
            R"(=
 variable: $v
 int: 0
call: print
 tuple:
  int: 2
  int: 1
)");
}

TEST(MacroExpansion, Redefinition) {
  EXPECT_EQ(diagnostics("macro f(a) { a } macro f(b) { b } BEGIN { }"),
            R"(stdin:1:24-25: ERROR: Redefinition of macro: f
macro f(a) { a } macro f(b) { b } BEGIN { }
                       ~
)");
  // A general definition before a specific one takes its calls: that is a
  // redefinition too. Specific ones go first.
  EXPECT_EQ(diagnostics("macro f(a) { a } macro f($b) { $b } BEGIN { }"),
            R"(stdin:1:24-25: ERROR: Redefinition of macro: f
macro f(a) { a } macro f($b) { $b } BEGIN { }
                       ~
)");
}

TEST(MacroExpansion, DuplicateParameters) {
  EXPECT_EQ(
      diagnostics("macro f(x, x) { x } macro g($x, @y, $x) { 1 } "
                  "macro h(@m, @m) { 1 } BEGIN { }"),
      R"(stdin:1:12-13: ERROR: Ident for macro argument has already been used: x
macro f(x, x) { x } macro g($x, @y, $x) { 1 } macro h(@m, @m) { 1 } BEGIN { }
           ~
stdin:1:37-39: ERROR: Variable for macro argument has already been used: $x
macro f(x, x) { x } macro g($x, @y, $x) { 1 } macro h(@m, @m) { 1 } BEGIN { }
                                    ~~
stdin:1:59-61: ERROR: Map for macro argument has already been used: @m
macro f(x, x) { x } macro g($x, @y, $x) { 1 } macro h(@m, @m) { 1 } BEGIN { }
                                                          ~~
)");
}

TEST(MacroExpansion, WrongNumberOfArguments) {
  EXPECT_EQ(
      diagnostics("macro f(a) { a } BEGIN { print(f(1, 2)); }"),
      R"(stdin:1:32-39: ERROR: Call to f() has arguments that do not match any definition.
macro f(a) { a } BEGIN { print(f(1, 2)); }
                               ~~~~~~~
HINT: The closest definition of f() has a different number of arguments. Expected: 1 but got 2
)");
  EXPECT_EQ(
      diagnostics("macro f(a) { a } BEGIN { print(f); }"),
      R"(stdin:1:32-33: ERROR: Call to f() has arguments that do not match any definition.
macro f(a) { a } BEGIN { print(f); }
                               ~
HINT: The closest definition of f() has a different number of arguments. Expected: 1 but got 0
)");
}

TEST(MacroExpansion, MismatchedArgumentKinds) {
  EXPECT_EQ(
      diagnostics("macro f($x, @m) { $x } BEGIN { $a = 1; "
                  "print(f(@a, $a)); }"),
      R"(stdin:1:46-55: ERROR: Call to f() has arguments that do not match any definition.
macro f($x, @m) { $x } BEGIN { $a = 1; print(f(@a, $a)); }
                                             ~~~~~~~~~
stdin:1:48-50: ERROR: Mismatched arg. f() expects a variable for arg $x but got a map.
macro f($x, @m) { $x } BEGIN { $a = 1; print(f(@a, $a)); }
                                               ~~
stdin:1:52-54: ERROR: Mismatched arg. f() expects a map for arg @m but got a variable.
macro f($x, @m) { $x } BEGIN { $a = 1; print(f(@a, $a)); }
                                                   ~~
)");
  EXPECT_EQ(
      diagnostics("macro f($x) { $x } macro g(@m) { 1 } "
                  "BEGIN { print(f(1)); print(g(@m[1])); }"),
      R"(stdin:1:52-56: ERROR: Call to f() has arguments that do not match any definition.
macro f($x) { $x } macro g(@m) { 1 } BEGIN { print(f(1)); print(g(@m[1])); }
                                                   ~~~~
stdin:1:54-55: ERROR: Mismatched arg. f() expects a variable for arg $x but got an expression.
macro f($x) { $x } macro g(@m) { 1 } BEGIN { print(f(1)); print(g(@m[1])); }
                                                     ~
stdin:1:65-73: ERROR: Call to g() has arguments that do not match any definition.
macro f($x) { $x } macro g(@m) { 1 } BEGIN { print(f(1)); print(g(@m[1])); }
                                                                ~~~~~~~~
stdin:1:67-72: ERROR: Mismatched arg. g() expects a map for arg @m but got an expression.
macro f($x) { $x } macro g(@m) { 1 } BEGIN { print(f(1)); print(g(@m[1])); }
                                                                  ~~~~~
)");
}

TEST(MacroExpansion, MapsMustBePassedIn) {
  EXPECT_EQ(
      diagnostics("macro f(@m) { @other = 1; @m = 2; } BEGIN { f(@x); }"),
      R"(stdin:1:15-21: ERROR: Unhygienic access to map: @other. Maps must be passed into the macro as arguments.
macro f(@m) { @other = 1; @m = 2; } BEGIN { f(@x); }
              ~~~~~~
stdin:1:45-50: ERROR: expanded from
macro f(@m) { @other = 1; @m = 2; } BEGIN { f(@x); }
                                            ~~~~~
)");
}

TEST(MacroExpansion, DeclarationShadowingAParameter) {
  EXPECT_EQ(diagnostics("macro f($x) { let $x = 1; $x } BEGIN { $a = 1; "
                        "print(f($a)); }"),
            R"(stdin:1:15-25: ERROR: Variable declaration shadows macro arg $x
macro f($x) { let $x = 1; $x } BEGIN { $a = 1; print(f($a)); }
              ~~~~~~~~~~
stdin:1:54-59: ERROR: expanded from
macro f($x) { let $x = 1; $x } BEGIN { $a = 1; print(f($a)); }
                                                     ~~~~~
)");
}

TEST(MacroExpansion, RecursionIsAnError) {
  EXPECT_EQ(
      diagnostics("macro f(x) { g(x) } macro g(x) { f(x) } "
                  "BEGIN { print(f(1)); }"),
      R"(stdin:1:34-38: ERROR: Recursive macro call detected. Call chain: f > g > f
macro f(x) { g(x) } macro g(x) { f(x) } BEGIN { print(f(1)); }
                                 ~~~~
stdin:1:14-18: ERROR: expanded from
macro f(x) { g(x) } macro g(x) { f(x) } BEGIN { print(f(1)); }
             ~~~~
stdin:1:55-59: ERROR: expanded from
macro f(x) { g(x) } macro g(x) { f(x) } BEGIN { print(f(1)); }
                                                      ~~~~
)");
  EXPECT_EQ(
      diagnostics("macro loop() { loop } BEGIN { print(loop); }"),
      R"(stdin:1:16-20: ERROR: Recursive macro call detected. Call chain: loop > loop
macro loop() { loop } BEGIN { print(loop); }
               ~~~~
stdin:1:37-41: ERROR: expanded from
macro loop() { loop } BEGIN { print(loop); }
                                    ~~~~
)");
}

TEST(MacroExpansion, ExponentialExpansionIsStopped) {
  std::string calls = "0";
  for (int i = 0; i < 40; i++)
    calls = "d(" + calls + ")";
  Frontend f = analyse("macro d(x) { x + x } BEGIN { print(" + calls + "); }");
  EXPECT_FALSE(f.ok);
  ASSERT_FALSE(f.ctx->diags().all().empty());
  EXPECT_EQ(f.ctx->diags().all().front().message,
            "macro expansion is too large (more than 200000 nodes)");
}

TEST(MacroExpansion, ExpansionDepthIsLimited) {
  // Each expansion nests its body, four levels here: 200 nested calls
  // parse, but expand past the limit.
  std::string calls = "1";
  for (int i = 0; i < 200; i++)
    calls = "m(" + calls + ")";
  Frontend f =
      analyse("macro m(x) { ((x + 1) + 1) + 1 } BEGIN { $x = " + calls + "; }");
  EXPECT_FALSE(f.ok);
  ASSERT_EQ(f.ctx->diags().all().size(), 1u);
  EXPECT_EQ(f.ctx->diags().all()[0].message,
            "the program is nested too deeply (more than 500 levels)");
}

TEST(MacroExpansion, BuiltinsAreNotExpanded) {
  EXPECT_EQ(expanded("macro pid() { 5 } BEGIN { print(pid); print(pid()); }"),
            R"(call: print
 identifier: pid
call: print
 int: 5
)");
}

TEST(MacroExpansion, TypeNamesInSizeofAreNotExpanded) {
  EXPECT_EQ(expanded("macro uint64_t() { 1 } BEGIN { print(sizeof(uint64_t)); "
                     "print(sizeof(uint64_t())); }"),
            R"(call: print
 sizeof
  identifier: uint64_t
call: print
 sizeof
  int: 1
)");
}

TEST(MacroExpansion, ConfigValuesAndMapDeclarationsAreNotExpanded) {
  EXPECT_EQ(diagnostics("config = { stack_mode = perf } let @m = hash(4); "
                        "macro perf() { 1 } macro hash(n) { 2 } "
                        "BEGIN { @m[1] = 1; }"),
            "");
}

TEST(MacroExpansion, MacrosInFunctionsAndPredicates) {
  EXPECT_EQ(diagnostics("macro big(x) { x > 10 } "
                        "fn check($v: int64): bool { return big($v); } "
                        "uprobe:/bin/x:f /big(arg0)/ { print(check(arg1)); }"),
            "");
}

TEST(MacroExpansion, UnusedMacrosAreNotChecked) {
  EXPECT_EQ(diagnostics("macro never() { @unhygienic = $nope; } BEGIN { }"),
            "");
}

} // namespace
} // namespace ubtrace::test
