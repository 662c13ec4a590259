// `ubtrace -l` for userspace probes, checked by content and against
// bpftrace (Debian's 0.17) where it can run here.
#include "runtime/symbols/probe_resolver.h"
#include "tests/unit/symbols/test_support.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::bpftrace_unavailable;
using ubtrace::symbols_test::prog;
using ubtrace::symbols_test::run_command;

namespace {

std::vector<std::string> list(const std::string &pattern,
                              std::optional<pid_t> pid = {}) {
  ProbeResolver r;
  auto lines = r.list(pattern, pid);
  EXPECT_TRUE(lines) << pattern << ": " << (lines ? "" : lines.error());
  return lines ? *lines : std::vector<std::string>{};
}

// bpftrace -l PATTERN's lines; nullopt when it fails.
std::optional<std::vector<std::string>> bpftrace_list(const std::string &p) {
  auto out = run_command({"bpftrace", "-l", p});
  if (out.status != 0)
    return std::nullopt;
  std::vector<std::string> lines;
  std::istringstream in(out.out);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty())
      lines.push_back(line);
  return lines;
}

void compare_with_bpftrace(const std::string &pattern) {
  SCOPED_TRACE(pattern);
  auto theirs = bpftrace_list(pattern);
  ASSERT_TRUE(theirs) << "bpftrace -l failed";
  auto ours = list(pattern);
  EXPECT_FALSE(ours.empty());
  EXPECT_EQ(ours, *theirs);
}

} // namespace

TEST(Listing, Uprobes) {
  const std::string path = prog("symtest_pie");
  EXPECT_EQ(list("uprobe:" + path + ":ubt_read*"),
            (std::vector<std::string>{"uprobe:" + path + ":ubt_read_one",
                                      "uprobe:" + path + ":ubt_read_two",
                                      "uprobe:" + path + ":ubt_reader"}));
  EXPECT_EQ(list("uretprobe:" + path + ":ubt_add"),
            std::vector<std::string>{"uretprobe:" + path + ":ubt_add"});
  // Aliases are listed under each name.
  EXPECT_EQ(list("uprobe:" + path + ":ubt_alias*").size(), 2u);
  // No function: every function.
  auto all = list("uprobe:" + path);
  EXPECT_EQ(all, list("uprobe:" + path + ":*"));
  EXPECT_GE(all.size(), 10u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
}

TEST(Listing, Usdt) {
  const std::string path = prog("usdt_pie");
  const std::string p = "usdt:" + path + ":ubt:";
  std::vector<std::string> all{p + "args2", p + "consts", p + "globals",
                               p + "sema",  p + "small",  p + "twice"};
  EXPECT_EQ(list("usdt:" + path + ":*"), all);
  EXPECT_EQ(list("usdt:" + path), all);
  EXPECT_EQ(list("usdt:" + path + ":ubt:*"), all);
  EXPECT_EQ(list("usdt:" + path + ":twice"),
            std::vector<std::string>{p + "twice"});
  EXPECT_EQ(list("usdt:" + path + ":*a*"),
            (std::vector<std::string>{p + "args2", p + "globals", p + "sema",
                                      p + "small"}));
  EXPECT_TRUE(list("usdt:" + path + ":other:*").empty());
}

TEST(Listing, LibrariesByName) {
  auto lines = list("uprobe:libc:mall*");
  if (lines.empty())
    GTEST_SKIP() << "libc not found";
  auto libc = resolve_binary("libc");
  ASSERT_TRUE(libc);
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "uprobe:" + (*libc)[0].path + ":malloc"),
            lines.end());
}

TEST(Listing, Errors) {
  ProbeResolver r;
  EXPECT_FALSE(r.list("kprobe:foo"));
  EXPECT_FALSE(r.list("uprobe:"));
  EXPECT_FALSE(r.list("uprobe:libubtrace_missing:*"));
}

TEST(Listing, AgreesWithBpftrace) {
  if (auto why = bpftrace_unavailable())
    GTEST_SKIP() << *why;
  compare_with_bpftrace("uprobe:" + prog("symtest_pie") + ":*");
  compare_with_bpftrace("uprobe:" + prog("symtest_cpp") + ":*");
  compare_with_bpftrace("uprobe:" + prog("symtest_stripped") + ":*");
  compare_with_bpftrace("usdt:" + prog("usdt_pie") + ":*");
  compare_with_bpftrace("usdt:" + prog("usdt_nopie") + ":ubt:*");
  compare_with_bpftrace("uprobe:/bin/bash:read*");
  compare_with_bpftrace("uprobe:libc:mall*");
  compare_with_bpftrace("uprobe:bash:readline");
}

TEST(Listing, AgreesWithBpftraceOnAllOfLibc) {
  if (auto why = bpftrace_unavailable())
    GTEST_SKIP() << *why;
  // Every function of libc, its separate debug file's included.
  compare_with_bpftrace("uprobe:libc:*");
}
