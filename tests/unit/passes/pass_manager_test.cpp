// The pass manager: passes run in order, stop after the first one that
// reports errors, and stop after a named pass on request.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(PassManager, Order) {
  std::vector<std::string> names;
  for (const auto &p : ast::semantic_passes())
    names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"config", "c-definitions",
                                             "macro-expansion", "named-params",
                                             "attach-points", "semantic",
                                             "metric-annotations"}));
}

TEST(PassManager, StopsAtTheFirstPassWithErrors) {
  // A bad config value and an unknown probe type: only the config error
  // is reported, the attach point pass does not run.
  EXPECT_EQ(
      diagnostics("config = { max_strlen = x } kprobe:f { $x = nope; }"),
      R"(stdin:1:25-26: ERROR: max_strlen expects a non-negative integer in [1, 65536], got 'x'
config = { max_strlen = x } kprobe:f { $x = nope; }
                        ~
)");
}

TEST(PassManager, EachPassReportsAllItsErrors) {
  EXPECT_EQ(diagnostics("BEGIN { $a = nope1; $b = nope2; }"),
            R"(stdin:1:14-19: ERROR: Unknown identifier: 'nope1'
BEGIN { $a = nope1; $b = nope2; }
             ~~~~~
stdin:1:26-31: ERROR: Unknown identifier: 'nope2'
BEGIN { $a = nope1; $b = nope2; }
                         ~~~~~
)");
}

TEST(PassManager, StopAfterAPass) {
  // The semantic error is not found when stopping at attach-points.
  RunOptions o;
  o.last_pass = "attach-points";
  Frontend f = analyse("BEGIN { $x = nope; }", o);
  EXPECT_TRUE(f.ok);
  EXPECT_EQ(f.diags(), "");
  EXPECT_EQ(f.ctx->root->probes[0]->attach_points[0]->provider(), "begin");
}

TEST(PassManager, WarningsDoNotFail) {
  Frontend f = analyse("let @unused = hash(4); BEGIN { }");
  EXPECT_TRUE(f.ok);
  EXPECT_EQ(f.diags(), R"(stdin:1:5-12: WARNING: Unused map: @unused
let @unused = hash(4); BEGIN { }
    ~~~~~~~
)");
  EXPECT_EQ(f.ctx->diags().str(false), "");
}

TEST(PassManager, ErrorsPrintBeforeWarnings) {
  EXPECT_EQ(diagnostics("let @unused = hash(4); BEGIN { $x = nope; }"),
            R"(stdin:1:37-41: ERROR: Unknown identifier: 'nope'
let @unused = hash(4); BEGIN { $x = nope; }
                                    ~~~~
stdin:1:5-12: WARNING: Unused map: @unused
let @unused = hash(4); BEGIN { $x = nope; }
    ~~~~~~~
)");
}

} // namespace
} // namespace ubtrace::test
