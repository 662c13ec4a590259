// Differential tests against the bpftrace installed here (Debian's 0.17):
// a BEGIN-only script makes maps and printf output, and the same data is
// printed by ubtrace_output. bpftrace 0.17 differs from 0.26 (our target)
// in known ways, normalised away before comparing:
//   - 0.17 prints "Attaching N probes..." on stdout (0.26: "Attached N
//     probes" on stderr);
//   - 0.17 writes a space after "@h:" and "@h[k]:" above a histogram;
//   - 0.17 prints stats as "count N, average N, total N" (0.26: a record,
//     "{ .count = N, .average = N, .total = N }");
//   - 0.17 prints an extra blank line after avg and stats maps;
//   - 0.17 labels single-value buckets of lhist(..., 1) "[4, 5)", 0.26
//     "[4]" (it prints any bucket between adjacent integers that way);
//   - 0.17 sorts min/max maps by signed value (0.26 by unsigned: negative
//     values last), so the data here avoids negative minima and maxima;
//   - 0.17 caps hist buckets at 2^32, so the data stays below it;
//   - 0.17 printf uses printf(3): precision, '0' with negatives and the
//     space flag differ (see printf_test.cpp), so those stay out of here.
// Ties in value-sorted maps are left in hash order by bpftrace, so the data
// has none. When bpftrace is missing or cannot run, the tests skip.
#include "backends/output/json_output.h"
#include "backends/output/printf_format.h"
#include "backends/output/text_output.h"
#include "tests/unit/output/map_builder.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::output::test {
namespace {

using runtime::AggKind;

struct BpftraceRun {
  bool ok = false;
  bool environment = false; // failed because bpftrace cannot run here
  std::string out, why;
};

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

BpftraceRun run_script(const std::string &bpftrace, const std::string &script) {
  BpftraceRun r;
  std::string base = "/tmp/ubt-output-oracle-" + std::to_string(::getpid());
  std::ofstream(base + ".bt") << script;
  std::string cmd =
      "timeout 60 " + bpftrace + " " + base + ".bt 2>" + base + ".err";
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p) {
    r.why = "popen failed";
    return r;
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
    r.out.append(buf.data(), n);
  int status = ::pclose(p);
  std::string err = read_file(base + ".err");
  ::unlink((base + ".bt").c_str());
  ::unlink((base + ".err").c_str());
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!r.ok)
    r.why = "bpftrace exit status " + std::to_string(status) + ":\n" + err;
  return r;
}

// Runs `script`. When it fails, a trivial script tells whether bpftrace
// cannot run here at all (skip) or rejected this script (a test failure).
BpftraceRun run_bpftrace(const std::string &script) {
  std::string bpftrace = UBTRACE_BPFTRACE_PATH;
  if (bpftrace.empty() || bpftrace.find("NOTFOUND") != std::string::npos ||
      ::access(bpftrace.c_str(), X_OK) != 0) {
    BpftraceRun r;
    r.environment = true;
    r.why = "bpftrace is not installed";
    return r;
  }
  BpftraceRun r = run_script(bpftrace, script);
  if (!r.ok && !run_script(bpftrace, "BEGIN { exit(); }").ok) {
    r.environment = true;
    r.why = "bpftrace cannot run here (needs root and BPF): " + r.why;
  }
  return r;
}

#define RUN_OR_SKIP(r)                                                         \
  do {                                                                         \
    if (!(r).ok && (r).environment)                                            \
      GTEST_SKIP() << (r).why;                                                 \
    ASSERT_TRUE((r).ok) << (r).why;                                            \
  } while (0)

// Rewrites 0.17's output the way 0.26 prints the same maps.
std::string normalise_017(const std::string &out,
                          const std::set<std::string> &avg_maps) {
  std::istringstream in(out);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  if (!lines.empty() && lines[0].rfind("Attaching ", 0) == 0)
    lines.erase(lines.begin());
  static const std::regex stats(
      R"(count (-?\d+), average (-?\d+), total (-?\d+)$)");
  static const std::regex adjacent(R"(^\[(-?\d+), (-?\d+)\)( *))");
  std::string result;
  std::string previous;
  for (auto &l : lines) {
    std::smatch m;
    if (std::regex_search(l, m, adjacent) &&
        std::stoll(m[1].str()) + 1 == std::stoll(m[2].str())) {
      std::string label = "[" + m[1].str() + "]";
      label.resize(m.length(0), ' ');
      l = label + m.suffix().str();
    }
    if (l.size() >= 2 && l[0] == '@' && l.substr(l.size() - 2) == ": ")
      l.pop_back();
    l = std::regex_replace(l, stats,
                           "{ .count = $1, .average = $2, .total = $3 }");
    if (l.empty()) {
      bool after_avg = false;
      for (const auto &name : avg_maps)
        if (previous.rfind(name + "[", 0) == 0 ||
            previous.rfind(name + ":", 0) == 0)
          after_avg = true;
      if (after_avg) {
        previous = l;
        continue;
      }
    }
    result += l + "\n";
    previous = l;
  }
  return result;
}

std::vector<uint64_t> hist_buckets_of(std::initializer_list<int64_t> values) {
  std::vector<uint64_t> b(runtime::hist_buckets(0), 0);
  for (int64_t v : values)
    b[hist_bucket(v, 0)]++;
  return b;
}

runtime::MapSpec hist_map(std::string name, ValueType key) {
  auto s = map_spec(std::move(name), AggKind::Hist, std::move(key), i64());
  s.value_size = runtime::hist_buckets(0) * 8;
  return s;
}

runtime::MapSpec lhist_map(std::string name, ValueType key, int64_t min,
                           int64_t max, int64_t step) {
  auto s = map_spec(std::move(name), AggKind::LHist, std::move(key), i64());
  s.lhist_min = min;
  s.lhist_max = max;
  s.lhist_step = step;
  s.value_size = runtime::lhist_buckets(min, max, step) * 8;
  return s;
}

std::vector<uint64_t> lhist_buckets_of(std::initializer_list<int64_t> values,
                                       int64_t min, int64_t max, int64_t step) {
  std::vector<uint64_t> b(runtime::lhist_buckets(min, max, step), 0);
  for (int64_t v : values)
    b[lhist_bucket(v, min, max, step)]++;
  return b;
}

std::string exit_text(const std::vector<MapBuilder> &maps) {
  std::vector<PrintedMap> printed;
  for (const auto &m : maps)
    printed.push_back(m.build());
  std::ostringstream out, err;
  TextOutput text(out, err);
  print_maps_at_exit(text, std::move(printed));
  return out.str();
}

constexpr size_t kStr = 64; // bpftrace 0.17's default string size

TEST(BpftraceOracle, AggregationMapsWithIntAndStringKeys) {
  BpftraceRun r = run_bpftrace(R"(BEGIN {
  @c["b"] = count(); @c["b"] = count(); @c["a"] = count();
  @c["zz"] = count(); @c["zz"] = count(); @c["zz"] = count();
  @s[3] = sum(10); @s[1] = sum(-5); @s[2] = sum(7);
  @mn[5] = min(3); @mn[1] = min(4); @mn[1] = min(9);
  @mx["k"] = max(9); @mx["j"] = max(2); @mx["j"] = max(1);
  @a[1] = avg(10); @a[1] = avg(20); @a[2] = avg(3); @a[-4] = avg(-8);
  @st[7] = stats(4); @st[7] = stats(8); @st[9] = stats(100);
  @cs = count(); @ss = sum(-12); @as = avg(7);
  @t[1, "a"] = 5; @t[1, "b"] = 3; @t[0, "c"] = 9;
  @str["x"] = "hello"; @str["w"] = "abc";
  @scal = 42;
  exit();
})");
  RUN_OR_SKIP(r);

  auto i = [](int64_t v) { return le64(static_cast<uint64_t>(v)); };
  std::vector<MapBuilder> maps;
  maps.emplace_back(map_spec("@c", AggKind::Count, string_type(kStr), u64()));
  maps.back()
      .add(str_bytes("b", kStr), le64(2))
      .add(str_bytes("a", kStr), le64(1))
      .add(str_bytes("zz", kStr), le64(3));
  maps.emplace_back(map_spec("@s", AggKind::Sum, i64(), i64()));
  maps.back().add(i(3), i(10)).add(i(1), i(-5)).add(i(2), i(7));
  maps.emplace_back(map_spec("@mn", AggKind::Min, i64(), i64()));
  maps.back().add(i(5), pair_bytes(3, 1)).add(i(1), pair_bytes(4, 1));
  maps.emplace_back(map_spec("@mx", AggKind::Max, string_type(kStr), i64()));
  maps.back()
      .add(str_bytes("k", kStr), pair_bytes(9, 1))
      .add(str_bytes("j", kStr), pair_bytes(2, 1));
  maps.emplace_back(map_spec("@a", AggKind::Avg, i64(), i64()));
  maps.back()
      .add(i(1), pair_bytes(30, 2))
      .add(i(2), pair_bytes(3, 1))
      .add(i(-4), pair_bytes(static_cast<uint64_t>(-8), 1));
  maps.emplace_back(map_spec("@st", AggKind::Stats, i64(), i64()));
  maps.back().add(i(7), pair_bytes(12, 2)).add(i(9), pair_bytes(100, 1));
  maps.emplace_back(map_spec("@cs", AggKind::Count, no_key(), u64()));
  maps.back().add({}, le64(1));
  maps.emplace_back(map_spec("@ss", AggKind::Sum, no_key(), i64()));
  maps.back().add({}, i(-12));
  maps.emplace_back(map_spec("@as", AggKind::Avg, no_key(), i64()));
  maps.back().add({}, pair_bytes(7, 1));
  maps.emplace_back(map_spec("@t", AggKind::None,
                             tuple_type({i64(), string_type(kStr)}), i64()));
  maps.back()
      .add(Packer().u64(1).str("a", kStr).bytes(), i(5))
      .add(Packer().u64(1).str("b", kStr).bytes(), i(3))
      .add(Packer().u64(0).str("c", kStr).bytes(), i(9));
  maps.emplace_back(
      map_spec("@str", AggKind::None, string_type(kStr), string_type(kStr)));
  maps.back()
      .add(str_bytes("x", kStr), str_bytes("hello", kStr))
      .add(str_bytes("w", kStr), str_bytes("abc", kStr));
  maps.emplace_back(map_spec("@scal", AggKind::None, no_key(), i64()));
  maps.back().add({}, i(42));

  EXPECT_EQ(exit_text(maps), normalise_017(r.out, {"@a", "@as", "@st"}));
}

TEST(BpftraceOracle, Histograms) {
  BpftraceRun r = run_bpftrace(R"(BEGIN {
  @h = hist(0); @h = hist(1); @h = hist(1000000); @h = hist(-5);
  @h = hist(3); @h = hist(3); @h = hist(2000);
  @hk["big"] = hist(5); @hk["big"] = hist(6); @hk["big"] = hist(100);
  @hk["small"] = hist(1 << 31);
  @hn[2] = hist(-1); @hn[1] = hist(0); @hn[1] = hist(1);
  @one = hist(7);
  exit();
})");
  RUN_OR_SKIP(r);

  std::vector<MapBuilder> maps;
  maps.emplace_back(hist_map("@h", no_key()));
  maps.back().add(
      {}, buckets_bytes(hist_buckets_of({0, 1, 1000000, -5, 3, 3, 2000})));
  maps.emplace_back(hist_map("@hk", string_type(kStr)));
  maps.back()
      .add(str_bytes("big", kStr), buckets_bytes(hist_buckets_of({5, 6, 100})))
      .add(str_bytes("small", kStr),
           buckets_bytes(hist_buckets_of({int64_t{1} << 31})));
  maps.emplace_back(hist_map("@hn", i64()));
  maps.back()
      .add(le64(2), buckets_bytes(hist_buckets_of({-1})))
      .add(le64(1), buckets_bytes(hist_buckets_of({0, 1})));
  maps.emplace_back(hist_map("@one", no_key()));
  maps.back().add({}, buckets_bytes(hist_buckets_of({7})));

  EXPECT_EQ(exit_text(maps), normalise_017(r.out, {}));
}

TEST(BpftraceOracle, LinearHistograms) {
  BpftraceRun r = run_bpftrace(R"(BEGIN {
  @l = lhist(3, 0, 10, 2); @l = lhist(-1, 0, 10, 2); @l = lhist(11, 0, 10, 2);
  @l = lhist(10, 0, 10, 2); @l = lhist(0, 0, 10, 2);
  @lk[1, "x"] = lhist(5, 0, 100, 10);
  @lk[2, "y"] = lhist(55, 0, 100, 10); @lk[2, "y"] = lhist(250, 0, 100, 10);
  @k = lhist(5000, 0, 8192, 1024); @k = lhist(100, 0, 8192, 1024);
  @m = lhist(3145728, 0, 5242880, 1048576);
  @one = lhist(4, 0, 8, 1); @one = lhist(5, 0, 8, 1); @one = lhist(5, 0, 8, 1);
  exit();
})");
  RUN_OR_SKIP(r);

  std::vector<MapBuilder> maps;
  maps.emplace_back(lhist_map("@l", no_key(), 0, 10, 2));
  maps.back().add(
      {}, buckets_bytes(lhist_buckets_of({3, -1, 11, 10, 0}, 0, 10, 2)));
  maps.emplace_back(
      lhist_map("@lk", tuple_type({i64(), string_type(kStr)}), 0, 100, 10));
  maps.back()
      .add(Packer().u64(1).str("x", kStr).bytes(),
           buckets_bytes(lhist_buckets_of({5}, 0, 100, 10)))
      .add(Packer().u64(2).str("y", kStr).bytes(),
           buckets_bytes(lhist_buckets_of({55, 250}, 0, 100, 10)));
  maps.emplace_back(lhist_map("@k", no_key(), 0, 8192, 1024));
  maps.back().add({},
                  buckets_bytes(lhist_buckets_of({5000, 100}, 0, 8192, 1024)));
  maps.emplace_back(lhist_map("@m", no_key(), 0, 5242880, 1048576));
  maps.back().add(
      {}, buckets_bytes(lhist_buckets_of({3145728}, 0, 5242880, 1048576)));
  maps.emplace_back(lhist_map("@one", no_key(), 0, 8, 1));
  maps.back().add({}, buckets_bytes(lhist_buckets_of({4, 5, 5}, 0, 8, 1)));

  EXPECT_EQ(exit_text(maps), normalise_017(r.out, {}));
}

TEST(BpftraceOracle, PrintfIntegersAndStringsWithWidths) {
  struct Line {
    std::string format;
    std::vector<Value> args;
    std::string script_args;
  };
  auto I = [](int64_t v) { return Value::of_int(v); };
  auto S = [](std::string s) { return Value::of_string(std::move(s)); };
  const std::vector<Line> lines = {
      {"[%d] [%5d] [%-5d] [%d] [%u] [%x] [%X] [%o] [%c]\\n",
       {I(42), I(42), I(42), I(-7), I(3000000000), I(255), I(255), I(8), I(65)},
       "42, 42, 42, -7, 3000000000, 255, 255, 8, 65"},
      {"[%s] [%10s] [%-10s] [%s] [%lu] [%llu] [%ld] [%lld] [%hd] [%hhu] "
       "[%zu]\\n",
       {S("abc"), S("abc"), S("abc"), S(""), I(123456789012), I(5),
        I(-123456789012), I(7), I(70000), I(300), I(9)},
       R"("abc", "abc", "abc", "", 123456789012, 5, -123456789012, 7, 70000, 300, 9)"},
      {"[%08x] [%5s|%-3s] [%d] [%x] [%lx] [%08d]\\n",
       {I(255), S("ab"), S("abcdef"), I(5000000000), I(-1), I(-1), I(123)},
       R"(255, "ab", "abcdef", 5000000000, -1, -1, 123)"},
      {"%-16s %6d %s\\n",
       {S("comm"), I(1234), S("done")},
       R"("comm", 1234, "done")"},
  };
  std::string script = "BEGIN {\n";
  std::string expected;
  for (const auto &l : lines) {
    script += "  printf(\"" + l.format + "\", " + l.script_args + ");\n";
    std::string format =
        std::regex_replace(l.format, std::regex(R"(\\n)"), "\n");
    expected += ParsedFormat::parse(format).format(l.args);
  }
  script += "  exit();\n}\n";
  BpftraceRun r = run_bpftrace(script);
  RUN_OR_SKIP(r);
  std::string got = normalise_017(r.out, {});
  // printf output, then the two newlines of the (empty) exit printing.
  EXPECT_EQ(got, expected + "\n\n");
}

} // namespace
} // namespace ubtrace::output::test
