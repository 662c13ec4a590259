// The attach point pass: each provider's forms split into their parts,
// positional parameters expanded, and the errors for malformed attach
// points and for probe types no backend of ubtrace runs.
#include "ast/builtins.h"
#include "ast/passes/attach_points.h"
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>
#include <set>

namespace ubtrace::test {
namespace {

RunOptions upto_attach_points(std::vector<std::string> positional = {}) {
  RunOptions o;
  o.positional = std::move(positional);
  o.last_pass = "attach-points";
  return o;
}

// Every attach point of the script as the pass understood it, one per
// line; or the diagnostics.
std::string parts(const std::string &src,
                  std::vector<std::string> positional = {}) {
  Frontend f = analyse(src, upto_attach_points(std::move(positional)));
  if (!f.ok)
    return f.diags();
  std::string out;
  for (auto *p : f.ctx->root->probes) {
    for (auto *ap : p->attach_points) {
      out += ap->provider();
      if (!ap->target.empty())
        out += " target=" + ap->target;
      if (!ap->ns.empty())
        out += " ns=" + ap->ns;
      if (!ap->func.empty())
        out += " func=" + ap->func;
      if (!ap->lang.empty())
        out += " lang=" + ap->lang;
      if (!ap->unit.empty())
        out += " unit=" + ap->unit + " freq=" + std::to_string(ap->freq);
      if (ap->has_offset)
        out += " offset=" + std::to_string(ap->offset);
      if (ap->has_address)
        out += " address=" + std::to_string(ap->address);
      if (ap->wildcard)
        out += " wildcard";
      if (ap->perf_event)
        out += " perf=" + std::to_string(ap->perf_type) + "/" +
               std::to_string(ap->perf_config) + "/" +
               std::to_string(ap->perf_config1) + "/" +
               std::to_string(ap->perf_config2);
      out += " name=" + ap->name() + "\n";
    }
  }
  return out;
}

std::string probe(const std::string &ap,
                  std::vector<std::string> positional = {}) {
  return parts(ap + " { }", std::move(positional));
}

TEST(AttachPointPass, BeginEndInBothSpellings) {
  EXPECT_EQ(parts("BEGIN, END, begin, end { }"),
            "begin name=begin\nend name=end\nbegin name=begin\nend name=end\n");
}

TEST(AttachPointPass, BeginTakesNoArguments) {
  EXPECT_EQ(
      probe("BEGIN:x"),
      R"(stdin:1:1-8: ERROR: Invalid begin probe 'BEGIN:x': begin takes no arguments
BEGIN:x { }
~~~~~~~
)");
}

// A hardware breakpoint as perf_event_attr has it: type 5, bp_type
// (R 1, W 2, X 4), bp_addr, bp_len (8 for an instruction's).
TEST(AttachPointPass, Watchpoint) {
  EXPECT_EQ(parts("watchpoint:0x10000000:8:rw, w:4096:1:x, aw:0x1000:2:wr { }"),
            "watchpoint func=rw unit=8 freq=1 perf=5/3/268435456/8 "
            "name=watchpoint:0x10000000:8:rw\n"
            "watchpoint func=x unit=1 freq=1 perf=5/4/4096/8 "
            "name=watchpoint:0x1000:1:x\n"
            "asyncwatchpoint func=rw unit=2 freq=1 perf=5/3/4096/2 "
            "name=asyncwatchpoint:0x1000:2:rw\n");
}

TEST(AttachPointPass, Uprobe) {
  EXPECT_EQ(probe("uprobe:/bin/bash:readline"),
            "uprobe target=/bin/bash func=readline "
            "name=uprobe:/bin/bash:readline\n");
  EXPECT_EQ(probe("u:libc:malloc"),
            "uprobe target=libc func=malloc name=uprobe:libc:malloc\n");
  EXPECT_EQ(probe("uretprobe:./app:main"),
            "uretprobe target=./app func=main name=uretprobe:./app:main\n");
  EXPECT_EQ(probe("ur:/lib/libc.so.6:free"),
            "uretprobe target=/lib/libc.so.6 func=free "
            "name=uretprobe:/lib/libc.so.6:free\n");
}

TEST(AttachPointPass, UprobeWildcards) {
  EXPECT_EQ(probe("uprobe:/lib/libc.so.6:mal*"),
            "uprobe target=/lib/libc.so.6 func=mal* wildcard "
            "name=uprobe:/lib/libc.so.6:mal*\n");
  EXPECT_EQ(probe("uprobe:/usr/lib/*/libssl.so.3:SSL_?rite"),
            "uprobe target=/usr/lib/*/libssl.so.3 func=SSL_?rite wildcard "
            "name=uprobe:/usr/lib/*/libssl.so.3:SSL_?rite\n");
  EXPECT_EQ(
      probe("uprobe:./app:[ab]*"),
      "uprobe target=./app func=[ab]* wildcard name=uprobe:./app:[ab]*\n");
}

TEST(AttachPointPass, UprobeQuotedNames) {
  EXPECT_EQ(probe(R"BT(uprobe:"/opt/my app/bin":"run")BT"),
            "uprobe target=/opt/my app/bin func=run "
            "name=uprobe:/opt/my app/bin:run\n");
  EXPECT_EQ(probe(R"BT(uprobe:./app:"ns::Klass::method(int)")BT"),
            "uprobe target=./app func=ns::Klass::method(int) "
            "name=uprobe:./app:ns::Klass::method(int)\n");
  EXPECT_EQ(probe(R"BT(uprobe:./app:"operator+")BT"),
            "uprobe target=./app func=operator+ name=uprobe:./app:operator+\n");
  EXPECT_EQ(probe(R"BT(uprobe:./app:"a\"b")BT"),
            "uprobe target=./app func=a\"b name=uprobe:./app:a\"b\n");
}

TEST(AttachPointPass, UprobeCppNames) {
  EXPECT_EQ(
      probe(R"BT(uprobe:./app:cpp:"ns::f")BT"),
      "uprobe target=./app func=ns::f lang=cpp name=uprobe:./app:ns::f\n");
  EXPECT_EQ(
      probe("uprobe:./app:cpp:ns::f"),
      "uprobe target=./app func=ns::f lang=cpp name=uprobe:./app:ns::f\n");
  EXPECT_EQ(probe("uprobe:./app:ns::Klass::*"),
            "uprobe target=./app func=ns::Klass::* lang=cpp wildcard "
            "name=uprobe:./app:ns::Klass::*\n");
}

TEST(AttachPointPass, UprobeOffsetsAndAddresses) {
  EXPECT_EQ(probe("uprobe:/bin/x:main+0x10"),
            "uprobe target=/bin/x func=main offset=16 "
            "name=uprobe:/bin/x:main+16\n");
  EXPECT_EQ(
      probe("uprobe:/bin/x:main+8"),
      "uprobe target=/bin/x func=main offset=8 name=uprobe:/bin/x:main+8\n");
  EXPECT_EQ(
      probe("uprobe:/bin/x:0x401000"),
      "uprobe target=/bin/x address=4198400 name=uprobe:/bin/x:4198400\n");
  EXPECT_EQ(probe("uprobe:/bin/x:4096"),
            "uprobe target=/bin/x address=4096 name=uprobe:/bin/x:4096\n");
}

TEST(AttachPointPass, UprobeErrors) {
  EXPECT_EQ(
      probe("uprobe:/bin/x"),
      R"(stdin:1:1-14: ERROR: Invalid uprobe probe 'uprobe:/bin/x': expected uprobe:BINARY:FUNCTION
uprobe:/bin/x { }
~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe::f"),
      R"(stdin:1:1-10: ERROR: Invalid uprobe probe 'uprobe::f': missing the binary or library
uprobe::f { }
~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/x:"),
      R"(stdin:1:1-15: ERROR: Invalid uprobe probe 'uprobe:/bin/x:': missing the function
uprobe:/bin/x: { }
~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uretprobe:/bin/x:f+4"),
      R"(stdin:1:1-21: ERROR: Invalid uretprobe probe 'uretprobe:/bin/x:f+4': uretprobes cannot have an offset
uretprobe:/bin/x:f+4 { }
~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/x:f*+4"),
      R"(stdin:1:1-19: ERROR: Invalid uprobe probe 'uprobe:/bin/x:f*+4': an offset or address cannot be used with wildcards
uprobe:/bin/x:f*+4 { }
~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/x:f+abc"),
      R"(stdin:1:1-20: ERROR: Invalid uprobe probe 'uprobe:/bin/x:f+abc': invalid offset: invalid integer: abc
uprobe:/bin/x:f+abc { }
~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/x:f+1+2"),
      R"(stdin:1:1-20: ERROR: Invalid uprobe probe 'uprobe:/bin/x:f+1+2': cannot take more than one offset
uprobe:/bin/x:f+1+2 { }
~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/x:f+"),
      R"(stdin:1:1-17: ERROR: Invalid uprobe probe 'uprobe:/bin/x:f+': invalid offset
uprobe:/bin/x:f+ { }
~~~~~~~~~~~~~~~~
)");
}

// Source locations are parsed and checked here; the line's address comes
// from the binary's DWARF through ASTContext::debug_types, which these
// tests do not give (tests/runtime/dwarf.test runs the real one).
TEST(AttachPointPass, UprobeSourceLocations) {
  EXPECT_EQ(
      probe("uprobe:/bin/bash@readline.c:362"),
      R"(stdin:1:1-32: ERROR: Invalid uprobe probe 'uprobe:/bin/bash@readline.c:362': source code locations need the binary's DWARF line table, which cannot be read here
uprobe:/bin/bash@readline.c:362 { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/bash@readline.c:3x"),
      R"(stdin:1:1-31: ERROR: Invalid uprobe probe 'uprobe:/bin/bash@readline.c:3x': Invalid line number: '3x'
uprobe:/bin/bash@readline.c:3x { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/bash@readline.c:3:c"),
      R"(stdin:1:1-32: ERROR: Invalid uprobe probe 'uprobe:/bin/bash@readline.c:3:c': Invalid column number: 'c'
uprobe:/bin/bash@readline.c:3:c { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/*sh@readline.c:3"),
      R"(stdin:1:1-29: ERROR: Invalid uprobe probe 'uprobe:/bin/*sh@readline.c:3': Cannot use wildcards with source code location
uprobe:/bin/*sh@readline.c:3 { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uprobe:/bin/bash@readline.c"),
      R"(stdin:1:1-28: ERROR: Invalid uprobe probe 'uprobe:/bin/bash@readline.c': Invalid uprobe arguments, expected format: uprobe:TARGET@FILE:LINE[:COL]
uprobe:/bin/bash@readline.c { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("uretprobe:/bin/bash@readline.c:3"),
      R"(stdin:1:1-33: ERROR: Invalid uretprobe probe 'uretprobe:/bin/bash@readline.c:3': source code locations (BINARY@FILE:LINE) can only be used with uprobe
uretprobe:/bin/bash@readline.c:3 { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
}

TEST(AttachPointPass, Usdt) {
  EXPECT_EQ(probe("usdt:./app:loop"),
            "usdt target=./app func=loop name=usdt:./app:loop\n");
  EXPECT_EQ(probe("U:/usr/lib/libc.so.6:libc:setjmp"),
            "usdt target=/usr/lib/libc.so.6 ns=libc func=setjmp "
            "name=usdt:/usr/lib/libc.so.6:libc:setjmp\n");
  EXPECT_EQ(probe("usdt:*:prov:*"),
            "usdt target=* ns=prov func=* wildcard name=usdt:*:prov:*\n");
  EXPECT_EQ(
      probe("usdt:./app"),
      R"(stdin:1:1-11: ERROR: Invalid usdt probe 'usdt:./app': expected usdt:BINARY:[PROVIDER:]NAME
usdt:./app { }
~~~~~~~~~~
)");
  // No binary: whatever the process maps (the resolver's rule).
  EXPECT_EQ(probe("usdt::p:n"), "usdt ns=p func=n name=usdt::p:n\n");
  EXPECT_EQ(
      probe("usdt::p:"),
      R"(stdin:1:1-9: ERROR: Invalid usdt probe 'usdt::p:': expected usdt:BINARY:[PROVIDER:]NAME
usdt::p: { }
~~~~~~~~
)");
}

TEST(AttachPointPass, GpuKernels) {
  EXPECT_EQ(probe("kernel:./vector_add:vecAdd"),
            "kernel target=./vector_add func=vecAdd "
            "name=kernel:./vector_add:vecAdd\n");
  EXPECT_EQ(probe("kernelret:./app:_Z6vecAddPfS_S_i"),
            "kernelret target=./app func=_Z6vecAddPfS_S_i "
            "name=kernelret:./app:_Z6vecAddPfS_S_i\n");
  EXPECT_EQ(probe("kernel::matmul*"),
            "kernel func=matmul* wildcard name=kernel::matmul*\n");
  EXPECT_EQ(probe("kernel:vecAdd"), "kernel func=vecAdd name=kernel::vecAdd\n");
  EXPECT_EQ(
      probe("kernel:./app:"),
      R"(stdin:1:1-14: ERROR: Invalid kernel probe 'kernel:./app:': missing the CUDA kernel name
kernel:./app: { }
~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("kernelret:a:b:c"),
      R"(stdin:1:1-16: ERROR: Invalid kernelret probe 'kernelret:a:b:c': expected kernelret:BINARY:KERNEL or kernelret::KERNEL
kernelret:a:b:c { }
~~~~~~~~~~~~~~~
)");
}

TEST(AttachPointPass, IntervalWithUnit) {
  EXPECT_EQ(probe("interval:s:1"),
            "interval unit=s freq=1 name=interval:s:1\n");
  EXPECT_EQ(probe("i:ms:100"),
            "interval unit=ms freq=100 name=interval:ms:100\n");
  EXPECT_EQ(probe("interval:us:1_000"),
            "interval unit=us freq=1000 name=interval:us:1000\n");
  EXPECT_EQ(probe("interval:hz:99"),
            "interval unit=hz freq=99 name=interval:hz:99\n");
}

TEST(AttachPointPass, SelfSignal) {
  EXPECT_EQ(probe("self:signal:SIGUSR1"),
            "self target=signal func=SIGUSR1 name=self:signal:SIGUSR1\n");
  EXPECT_EQ(probe("self:signal:SIGUSR2"),
            R"(stdin:1:1-20: ERROR: SIGUSR2 is not a supported signal
self:signal:SIGUSR2 { }
~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(probe("self:timer:SIGUSR1"),
            R"(stdin:1:1-19: ERROR: timer is not a supported trigger
self:timer:SIGUSR1 { }
~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("self:signal"),
      R"(stdin:1:1-12: ERROR: Invalid self probe 'self:signal': expected self:signal:SIGUSR1
self:signal { }
~~~~~~~~~~~
)");
}

TEST(AttachPointPass, BenchNamesAreRequiredAndUnique) {
  EXPECT_EQ(probe("bench:lhist"), "bench target=lhist name=bench:lhist\n");
  EXPECT_EQ(probe("bench:"),
            R"(stdin:1:1-7: ERROR: bench probes must have a name
bench: { }
~~~~~~
)");
  EXPECT_EQ(
      parts("bench:a { } bench:a { }"),
      R"(stdin:1:13-20: ERROR: "a" was used as the name for more than one BENCH probe
bench:a { } bench:a { }
            ~~~~~~~
)");
}

TEST(AttachPointPass, IntervalAsADurationIsKeptInMicroseconds) {
  EXPECT_EQ(probe("interval:1s"),
            "interval unit=us freq=1000000 name=interval:us:1000000\n");
  EXPECT_EQ(probe("interval:100ms"),
            "interval unit=us freq=100000 name=interval:us:100000\n");
  // A bare number is nanoseconds.
  EXPECT_EQ(probe("interval:1000000000"),
            "interval unit=us freq=1000000 name=interval:us:1000000\n");
  EXPECT_EQ(probe("interval:1e9"),
            "interval unit=us freq=1000000 name=interval:us:1000000\n");
}

TEST(AttachPointPass, IntervalErrors) {
  EXPECT_EQ(
      probe("interval:100"),
      R"(stdin:1:1-13: ERROR: Invalid interval probe 'interval:100': the minimum rate is 1000 nanoseconds (1us), found 100
interval:100 { }
~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("interval:ns:5"),
      R"(stdin:1:1-14: ERROR: Invalid interval probe 'interval:ns:5': 'ns' is not an accepted unit of time (use s, ms, us or hz)
interval:ns:5 { }
~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("interval:s:0"),
      R"(stdin:1:1-13: ERROR: Invalid interval probe 'interval:s:0': the interval must be a positive integer
interval:s:0 { }
~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("interval:s:abc"),
      R"(stdin:1:1-15: ERROR: Invalid interval probe 'interval:s:abc': invalid rate: invalid integer: abc
interval:s:abc { }
~~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("interval:fast"),
      R"(stdin:1:1-14: ERROR: Invalid interval probe 'interval:fast': invalid rate: invalid integer: fast
interval:fast { }
~~~~~~~~~~~~~
)");
  EXPECT_EQ(
      probe("interval"),
      R"(stdin:1:1-9: ERROR: Invalid interval probe 'interval': expected interval:UNIT:N or interval:DURATION (e.g. 1s, 100ms)
interval { }
~~~~~~~~
)");
}

TEST(AttachPointPass, PositionalParametersExpand) {
  EXPECT_EQ(probe("uprobe:$1:$2", {"/bin/bash", "readline"}),
            "uprobe target=/bin/bash func=readline "
            "name=uprobe:/bin/bash:readline\n");
  EXPECT_EQ(probe("interval:s:$1", {"5"}),
            "interval unit=s freq=5 name=interval:s:5\n");
  EXPECT_EQ(
      probe("uprobe:$2:f", {"a"}),
      R"(stdin:1:1-12: ERROR: positional parameter $2 is used in an attach point but was not given (1 given)
uprobe:$2:f { }
~~~~~~~~~~~
)");
}

TEST(AttachPointPass, HugePositionalIndexIsAnError) {
  // Found by the fuzzer: the index overflowed an int.
  EXPECT_EQ(
      probe("uprobe:$77777777777777777777:f", {"a"}),
      R"(stdin:1:1-31: ERROR: positional parameter $77777777777777777777 is used in an attach point but was not given (1 given)
uprobe:$77777777777777777777:f { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
}

TEST(AttachPointPass, ProbeLabelsAreDropped) {
  EXPECT_EQ(probe("my_probe=uprobe:/bin/x:f"),
            "uprobe target=/bin/x func=f name=uprobe:/bin/x:f\n");
}

TEST(AttachPointPass, UnknownProviders) {
  EXPECT_EQ(probe("uprob:/bin/x:f"),
            R"(stdin:1:1-15: ERROR: Invalid probe type: uprob
uprob:/bin/x:f { }
~~~~~~~~~~~~~~
HINT: Did you mean 'uprobe'?
)");
  EXPECT_EQ(probe("xyzzy:a"),
            R"(stdin:1:1-8: ERROR: Invalid probe type: xyzzy
xyzzy:a { }
~~~~~~~
HINT: ubtrace runs begin, end, interval, uprobe, uretprobe, usdt, kernel, kernelret, self, bench, profile, test, software, hardware, watchpoint, asyncwatchpoint and tracepoint probes
)");
  // A name in capitals gets the capitalised spelling.
  EXPECT_EQ(probe("BEGN"),
            R"(stdin:1:1-5: ERROR: Invalid probe type: BEGN
BEGN { }
~~~~
HINT: Did you mean 'BEGIN'?
)");
}

// Every kernel-side probe type of bpftrace parses and fails with one
// located error naming the probe types ubtrace runs.
class UnsupportedProbe
    : public ::testing::TestWithParam<std::pair<const char *, const char *>> {};

TEST_P(UnsupportedProbe, IsRejectedWithTheSupportedList) {
  auto [ap, provider] = GetParam();
  std::string src = std::string(ap) + " { }";
  std::string underline(std::string(ap).size(), '~');
  EXPECT_EQ(diagnostics(src),
            "stdin:1:1-" + std::to_string(std::string(ap).size() + 1) +
                ": ERROR: " + provider +
                " probes are not supported by ubtrace: it runs begin, end, "
                "interval, uprobe, uretprobe, usdt, kernel, kernelret, self, "
                "bench, profile, test, software, hardware, watchpoint, "
                "asyncwatchpoint and tracepoint probes\n" +
                src + "\n" + underline + "\n");
}

INSTANTIATE_TEST_SUITE_P(
    AttachPointPass, UnsupportedProbe,
    ::testing::Values(std::make_pair("kprobe:do_nanosleep", "kprobe"),
                      std::make_pair("k:vfs_read", "kprobe"),
                      std::make_pair("kretprobe:vfs_read", "kretprobe"),
                      std::make_pair("kr:vfs_read", "kretprobe"),
                      std::make_pair("rawtracepoint:sched_switch",
                                     "rawtracepoint"),
                      std::make_pair("rt:sched_switch", "rawtracepoint"),
                      std::make_pair("fentry:tcp_reset", "fentry"),
                      std::make_pair("f:vmlinux:tcp_reset", "fentry"),
                      std::make_pair("fexit:tcp_reset", "fexit"),
                      std::make_pair("fr:tcp_reset", "fexit"),
                      std::make_pair("kfunc:tcp_reset", "kfunc"),
                      std::make_pair("kretfunc:tcp_reset", "kretfunc"),
                      std::make_pair("iter:task", "iter"),
                      std::make_pair("it:task_file", "iter")));

TEST(AttachPointPass, EveryAttachPointOfAProbeIsChecked) {
  EXPECT_EQ(
      diagnostics("BEGIN, kprobe:f, t:a:b { }"),
      R"(stdin:1:8-16: ERROR: kprobe probes are not supported by ubtrace: it runs begin, end, interval, uprobe, uretprobe, usdt, kernel, kernelret, self, bench, profile, test, software, hardware, watchpoint, asyncwatchpoint and tracepoint probes
BEGIN, kprobe:f, t:a:b { }
       ~~~~~~~~
stdin:1:18-23: ERROR: Invalid tracepoint probe 't:a:b': ubtrace runs the system call tracepoints (syscalls and raw_syscalls) inside the traced process; a tracepoints need the kernel's
BEGIN, kprobe:f, t:a:b { }
                 ~~~~~
)");
}

TEST(AttachPointPass, ProbeSets) {
  auto set = [](const char *w) {
    return ast::probe_set_of(*ast::find_probe_kind(w));
  };
  EXPECT_EQ(set("begin"), ast::PS_CLI);
  EXPECT_EQ(set("END"), ast::PS_CLI);
  EXPECT_EQ(set("interval"), ast::PS_CLI);
  EXPECT_EQ(set("uprobe"), ast::PS_UPROBE);
  EXPECT_EQ(set("usdt"), ast::PS_UPROBE);
  EXPECT_EQ(set("ur"), ast::PS_URETPROBE);
  EXPECT_EQ(set("kernel"), ast::PS_GPU);
  EXPECT_EQ(set("kernelret"), ast::PS_GPU_RET);
  EXPECT_EQ(set("profile"), ast::PS_PROFILE);
  EXPECT_EQ(set("p"), ast::PS_PROFILE);
  EXPECT_EQ(set("software"), ast::PS_PROFILE);
  EXPECT_EQ(set("kprobe"), ast::PS_KERNEL);
  EXPECT_FALSE(ast::find_probe_kind("kprob").has_value());
}

// Every row's kind indexes its row, names and aliases are unique, and
// the kinds a backend runs are the ones the refusal message names.
TEST(AttachPointPass, ProbeKindTable) {
  size_t n = 0;
  const ast::ProbeKindInfo *rows = ast::probe_kind_table(n);
  std::set<std::string_view> words;
  std::string runnable;
  for (size_t i = 0; i < n; i++) {
    EXPECT_EQ(static_cast<size_t>(rows[i].kind), i);
    EXPECT_TRUE(words.insert(rows[i].name).second) << rows[i].name;
    if (!rows[i].alias.empty())
      EXPECT_TRUE(words.insert(rows[i].alias).second) << rows[i].alias;
    EXPECT_EQ(&ast::probe_kind_info(rows[i].kind), &rows[i]);
    EXPECT_EQ(ast::find_probe_kind(rows[i].name), rows[i].kind);
    if (rows[i].backend != ast::Backend::None)
      EXPECT_NE(ast::runnable_probe_kinds().find(rows[i].name),
                std::string::npos);
  }
}

// The period of an interval in nanoseconds, computed once by the pass.
TEST(AttachPointPass, IntervalPeriods) {
  struct Case {
    const char *ap;
    uint64_t ns;
  } cases[] = {
      {"interval:s:2", 2000000000ull},  {"interval:ms:5", 5000000ull},
      {"interval:us:7", 7000ull},       {"interval:hz:4", 250000000ull},
      {"interval:100ms", 100000000ull}, {"i:1us", 1000ull}};
  for (const auto &c : cases) {
    Frontend f = analyse(std::string(c.ap) + " { }", upto_attach_points());
    ASSERT_TRUE(f.ok) << c.ap << f.diags();
    EXPECT_EQ(f.ctx->root->probes[0]->attach_points[0]->period_ns, c.ns)
        << c.ap;
  }
}

} // namespace
} // namespace ubtrace::test
