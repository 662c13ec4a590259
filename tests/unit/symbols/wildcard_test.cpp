#include "runtime/symbols/wildcard.h"

#include <gtest/gtest.h>

using ubtrace::runtime::symbols::has_wildcard;
using ubtrace::runtime::symbols::Wildcard;

TEST(Wildcard, LiteralIsEquality) {
  Wildcard w("readline");
  EXPECT_TRUE(w.is_literal());
  EXPECT_TRUE(w.matches("readline"));
  EXPECT_FALSE(w.matches("readline2"));
  EXPECT_FALSE(w.matches("xreadline"));
  EXPECT_FALSE(w.matches(""));
}

TEST(Wildcard, Star) {
  Wildcard w("read*");
  EXPECT_FALSE(w.is_literal());
  EXPECT_TRUE(w.matches("read"));
  EXPECT_TRUE(w.matches("readline"));
  EXPECT_FALSE(w.matches("rea"));
  EXPECT_FALSE(w.matches("xread"));
  EXPECT_TRUE(Wildcard("*line").matches("readline"));
  EXPECT_FALSE(Wildcard("*line").matches("readlines"));
  EXPECT_TRUE(Wildcard("*").matches(""));
  EXPECT_TRUE(Wildcard("r*d*e").matches("readline"));
  EXPECT_FALSE(Wildcard("r*d*x").matches("readline"));
  // Stars cross ':' and '/' (bpftrace matches whole "path:symbol" lines).
  EXPECT_TRUE(Wildcard("*:ubt:*").matches("/tmp/a:ubt:args2"));
  EXPECT_TRUE(Wildcard("a**b").matches("ab"));
}

TEST(Wildcard, BacktracksOverStars) {
  EXPECT_TRUE(Wildcard("*aab").matches("aaaab"));
  EXPECT_TRUE(Wildcard("*a*b*c").matches("xaxxbxxbc"));
  EXPECT_FALSE(Wildcard("*a*b*c").matches("xaxxbxxb"));
}

TEST(Wildcard, QuestionMark) {
  Wildcard w("ma?n");
  EXPECT_TRUE(w.matches("main"));
  EXPECT_TRUE(w.matches("maxn"));
  EXPECT_FALSE(w.matches("man"));
  EXPECT_FALSE(w.matches("maiin"));
}

TEST(Wildcard, Classes) {
  Wildcard w("ubt_read_[ot]*");
  EXPECT_TRUE(w.matches("ubt_read_one"));
  EXPECT_TRUE(w.matches("ubt_read_two"));
  EXPECT_FALSE(w.matches("ubt_reader"));
  EXPECT_TRUE(Wildcard("f[a-c]").matches("fb"));
  EXPECT_FALSE(Wildcard("f[a-c]").matches("fd"));
  EXPECT_TRUE(Wildcard("f[!a-c]").matches("fd"));
  EXPECT_TRUE(Wildcard("f[^a-c]").matches("fd"));
  EXPECT_FALSE(Wildcard("f[!a-c]").matches("fa"));
  EXPECT_TRUE(Wildcard("f[]x]").matches("f]"));
  // No closing bracket: a literal '['.
  EXPECT_TRUE(Wildcard("f[x").matches("f[x"));
  EXPECT_TRUE(Wildcard("f[x").is_literal());
}

TEST(Wildcard, BracketsAlsoMatchLiterallyLikeBpftrace) {
  // bpftrace 0.26 expands only '*'; a C++ ABI tag copied from a listing
  // still matches.
  Wildcard w("*name[abi:cxx11]*");
  EXPECT_TRUE(w.matches("ns::name[abi:cxx11]"));
  EXPECT_TRUE(w.matches("ns::namea"));
  EXPECT_FALSE(w.matches("ns::nam"));
}

TEST(Wildcard, HasWildcard) {
  EXPECT_TRUE(has_wildcard("a*"));
  EXPECT_TRUE(has_wildcard("a?"));
  EXPECT_TRUE(has_wildcard("a[bc]"));
  EXPECT_FALSE(has_wildcard("a[b"));
  EXPECT_FALSE(has_wildcard("abc"));
  EXPECT_FALSE(has_wildcard("/usr/lib/libc.so.6"));
}
