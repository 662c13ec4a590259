// ast/location, ast/diagnostics and ast/suggest: bpftrace's diagnostic
// format (location, source line, underline, hints), errors before
// warnings, spans joined with +, and "did you mean" suggestions.
#include "ast/diagnostics.h"
#include "ast/location.h"
#include "ast/suggest.h"

#include <gtest/gtest.h>

namespace ubtrace::ast {
namespace {

Location at(const SourceFile &f, int line, int c1, int c2) {
  Location l;
  l.file = &f;
  l.begin = {line, c1};
  l.end = {line, c2};
  return l;
}

TEST(SourceFiles, SplitIntoLines) {
  SourceFile f("x.bt", "a\nbc\n\nd");
  EXPECT_EQ(f.lines, (std::vector<std::string>{"a", "bc", "", "d"}));
  SourceFile trailing("y.bt", "a\n");
  EXPECT_EQ(trailing.lines, (std::vector<std::string>{"a", ""}));
  SourceFile empty("z.bt", "");
  EXPECT_EQ(empty.lines, (std::vector<std::string>{""}));
}

TEST(Locations, Names) {
  SourceFile f("tool.bt", "BEGIN { }\nEND { }\n");
  EXPECT_EQ(at(f, 1, 1, 6).str(), "tool.bt:1:1-6");
  Location multi = at(f, 1, 1, 6) + at(f, 2, 1, 4);
  EXPECT_EQ(multi.str(), "tool.bt:1-2");
  EXPECT_EQ(Location{}.str(), "1:1-1");
}

TEST(Locations, Join) {
  SourceFile f("t", "abcdefgh");
  Location a = at(f, 1, 3, 5), b = at(f, 1, 1, 2);
  Location j = a + b;
  EXPECT_EQ(j.begin.column, 1);
  EXPECT_EQ(j.end.column, 5);
  EXPECT_EQ((Location{} + a).str(), a.str());
  EXPECT_EQ((a + Location{}).str(), a.str());
}

TEST(Locations, ContextUnderlinesTheSpan) {
  SourceFile f("t", "BEGIN { $x = nope; }");
  auto c = at(f, 1, 14, 18).context();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], "BEGIN { $x = nope; }");
  EXPECT_EQ(c[1], "             ~~~~");
}

TEST(Locations, ContextWidensTabs) {
  SourceFile f("t", "\t$x = nope;");
  auto c = at(f, 1, 7, 11).context();
  EXPECT_EQ(c[0], "    $x = nope;");
  EXPECT_EQ(c[1], "         ~~~~");
}

TEST(Locations, ContextAtTheEndOfALineStillMarks) {
  SourceFile f("t", "BEGIN");
  auto c = at(f, 1, 6, 6).context();
  EXPECT_EQ(c[1], "     ~");
}

TEST(Locations, ContextOfSeveralLinesHasNoUnderline) {
  SourceFile f("t", "a\nb\nc");
  Location l = at(f, 1, 1, 2) + at(f, 3, 1, 2);
  EXPECT_EQ(l.context(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Locations, ContextOutsideTheFileIsEmpty) {
  SourceFile f("t", "a");
  EXPECT_TRUE(at(f, 5, 1, 2).context().empty());
  EXPECT_TRUE(Location{}.context().empty());
}

TEST(Diagnostics, Format) {
  SourceFile f("stdin", "BEGIN { $x = nope; }");
  Diagnostics d;
  d.error(at(f, 1, 14, 18)) << "Unknown identifier: '"
                            << "nope"
                            << "'";
  d.warning(at(f, 1, 9, 11)).hint("first hint").hint("second hint")
      << "careful";
  d.error(Location{}) << "no location";
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.error_count(), 2u);
  EXPECT_EQ(d.all().size(), 3u);
  EXPECT_EQ(d.str(), R"(stdin:1:14-18: ERROR: Unknown identifier: 'nope'
BEGIN { $x = nope; }
             ~~~~
ERROR: no location
stdin:1:9-11: WARNING: careful
BEGIN { $x = nope; }
        ~~
HINT: first hint
HINT: second hint
)");
  EXPECT_EQ(d.str(false), R"(stdin:1:14-18: ERROR: Unknown identifier: 'nope'
BEGIN { $x = nope; }
             ~~~~
ERROR: no location
)");
}

TEST(Diagnostics, EmptyIsOk) {
  Diagnostics d;
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.str(), "");
  d.warning(Location{}) << "just a warning";
  EXPECT_TRUE(d.ok());
}

TEST(Suggestions, CloseNames) {
  std::vector<std::string> names = {"comm", "pid", "tid", "nsecs", "printf"};
  EXPECT_EQ(did_you_mean("cmm", names), "Did you mean 'comm'?");
  EXPECT_EQ(did_you_mean("nsec", names), "Did you mean 'nsecs'?");
  EXPECT_EQ(did_you_mean("PRINTF", names), "Did you mean 'printf'?");
  EXPECT_EQ(did_you_mean("zzzzzz", names), "");
  EXPECT_EQ(did_you_mean("comm", names), "");
}

TEST(Suggestions, NotForVeryShortNames) {
  // Every one or two letter name is one edit from another.
  EXPECT_EQ(closest_match("$c", {"$x", "$cc"}), "");
  EXPECT_EQ(closest_match("ab", {"ac"}), "");
  EXPECT_EQ(closest_match("@ab", {"@ac"}), "");
  EXPECT_EQ(closest_match("$abc", {"$abd"}), "$abd");
}

TEST(Suggestions, ClosestWins) {
  EXPECT_EQ(closest_match("counter", {"count", "counters", "counted"}),
            "counters");
}

} // namespace
} // namespace ubtrace::ast
