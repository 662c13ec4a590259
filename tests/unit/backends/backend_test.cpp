// The backends' shape: every probe kind goes to exactly one backend, whose
// kinds --info lists; the reporter's lines; the CLI backend's begin,
// interval and end probes as the session's loop drives them.
#include "ast/probe_kinds.h"
#include "backends/backend.h"
#include "backends/cli/cli_backend.h"
#include "backends/program_set.h"
#include "backends/reporter.h"
#include "runtime/maps/spec_layout.h"
#include "tests/unit/jit/script_bundle.h"

#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>

namespace ubtrace::backends {
namespace {

TEST(Selector, EveryProbeKindHasABackendAndAName) {
  size_t per_backend[std::size(kBackendKinds)] = {};
  for (runtime::ProbeKind k : kProbeKinds) {
    EXPECT_STRNE(probe_kind_name(k), "");
    per_backend[static_cast<size_t>(backend_for(k))]++;
  }
  for (BackendKind b : kBackendKinds) {
    EXPECT_STRNE(backend_name(b), "");
    EXPECT_GT(per_backend[static_cast<size_t>(b)], 0u) << backend_name(b);
  }
}

TEST(Selector, KindsAsInfoListsThem) {
  EXPECT_EQ(probe_kinds_of(BackendKind::Cli),
            "begin, end, interval, self, bench, test");
  EXPECT_EQ(probe_kinds_of(BackendKind::Userspace),
            "uprobe, uretprobe, usdt, profile, tracepoint, software, hardware, "
            "watchpoint");
  EXPECT_EQ(probe_kinds_of(BackendKind::Gpu), "kernel, kernelret");
  EXPECT_EQ(backend_for(runtime::ProbeKind::Uretprobe), BackendKind::Userspace);
  EXPECT_EQ(backend_for(runtime::ProbeKind::GpuKernelExit), BackendKind::Gpu);
  EXPECT_EQ(backend_for(runtime::ProbeKind::Interval), BackendKind::Cli);
}

// The front end's table (ast/probe_kinds.def) names a backend per probe
// kind; codegen turns the kind into the bundle's, and backend_for() picks
// the backend from that. The two must agree for every runnable row.
TEST(Selector, AgreesWithTheProbeKindTable) {
  const std::map<std::string_view, const char *> attach = {
      {"begin", "BEGIN"},
      {"end", "END"},
      {"interval", "interval:s:1"},
      {"uprobe", "uprobe:/bin/true:main"},
      {"uretprobe", "uretprobe:/bin/true:main"},
      {"usdt", "usdt:/bin/true:prov:name"},
      {"kernel", "kernel::k"},
      {"kernelret", "kernelret::k"},
      {"self", "self:signal:SIGUSR1"},
      {"bench", "bench:a"},
      {"profile", "profile:hz:99"},
      {"test", "test:a"},
      {"software", "software:cpu-clock:1000000"},
      {"hardware", "hardware:cycles:100000"},
      {"watchpoint", "watchpoint:0x10000000:8:w"},
      {"asyncwatchpoint", "asyncwatchpoint:0x10000000:8:w"},
      {"tracepoint", "tracepoint:syscalls:sys_enter_openat"}};
  // Rows that share another's runtime kind (and backend).
  const std::map<std::string_view, const char *> runs_as = {
      {"software", "profile"},
      {"hardware", "software, hardware, watchpoint"},
      {"watchpoint", "software, hardware, watchpoint"},
      {"asyncwatchpoint", "software, hardware, watchpoint"}};
  size_t n = 0;
  const ast::ProbeKindInfo *rows = ast::probe_kind_table(n);
  std::set<std::string> kinds;
  for (size_t i = 0; i < n; i++) {
    if (rows[i].backend == ast::Backend::None)
      continue;
    auto it = attach.find(rows[i].name);
    ASSERT_NE(it, attach.end())
        << rows[i].name << " needs an attach point here";
    auto bundle = jit::test::compile_script(std::string(it->second) + " { }");
    ASSERT_TRUE(bundle) << it->second << ": " << bundle.error();
    ASSERT_EQ(bundle->probes.size(), 1u);
    BackendKind want = rows[i].backend == ast::Backend::Cli ? BackendKind::Cli
                       : rows[i].backend == ast::Backend::Userspace
                           ? BackendKind::Userspace
                           : BackendKind::Gpu;
    EXPECT_EQ(backend_for(bundle->probes[0].kind), want) << rows[i].name;
    auto as = runs_as.find(rows[i].name);
    EXPECT_STREQ(probe_kind_name(bundle->probes[0].kind),
                 as != runs_as.end() ? as->second
                                     : std::string(rows[i].name).c_str());
    kinds.insert(probe_kind_name(bundle->probes[0].kind));
  }
  // Every runtime kind is some row's.
  EXPECT_EQ(kinds.size(), std::size(kProbeKinds));
}

TEST(Reporter, OneLinePerMessageInTheCliFormats) {
  std::ostringstream err;
  Reporter r(err);
  r.error("cannot open x");
  r.warning("GPU: a notice");
  r.info("hooked 1 site");
  EXPECT_EQ(
      err.str(),
      "ERROR: cannot open x\nWARNING: GPU: a notice\nINFO: hooked 1 site\n");
}

// The session, as the CLI backend sees it: counts what it is asked, and
// says exit() ran once `exit_after` drains have happened.
struct FakeHost final : BackendHost {
  size_t drains = 0, syncs = 0, exit_after = SIZE_MAX;
  std::vector<std::string> errors;
  void drain_events() override { drains++; }
  bool exiting() const override { return drains >= exit_after; }
  void sync_maps() override { syncs++; }
  void runtime_error(const std::string &text) override {
    errors.push_back(text);
  }
  void discard_events() override {}
  void set_exit_code(int) override {}
  void benchmark_result(const std::vector<std::string> &, size_t, uint64_t,
                        uint64_t) override {}
  void begin_capture() override {}
  Captured end_capture() override { return {"", 0, 0}; }
  void test_result(const std::vector<std::string> &, size_t, uint64_t,
                   const std::vector<bool> &, const std::string &) override {}
};

struct Loaded {
  runtime::Bundle bundle;
  std::unique_ptr<runtime::maps::Region> region;
  std::unique_ptr<ProgramSet> programs;
};

Loaded load(const std::string &script) {
  Loaded l;
  auto bundle = jit::test::compile_script(script);
  EXPECT_TRUE(bundle) << (bundle ? "" : bundle.error());
  l.bundle = std::move(*bundle);
  auto layouts = runtime::maps::layouts_for(l.bundle.maps);
  EXPECT_TRUE(layouts);
  auto region = runtime::maps::Region::create(*layouts);
  EXPECT_TRUE(region);
  l.region = std::make_unique<runtime::maps::Region>(std::move(*region));
  auto programs = ProgramSet::load(l.bundle, *l.region);
  EXPECT_TRUE(programs) << (programs ? "" : programs.error());
  l.programs = std::make_unique<ProgramSet>(std::move(*programs));
  return l;
}

constexpr const char *kScript =
    "BEGIN { @b = count(); } BEGIN { @b = count(); } "
    "interval:ms:10 { @i = count(); } END { @e = count(); } "
    "uprobe:/bin/true:main { @u = count(); }";

TEST(CliBackend, AttachesItsOwnProbesOnly) {
  Loaded l = load(kScript);
  FakeHost host;
  CliBackend cli(l.bundle, *l.programs, host);
  EXPECT_EQ(cli.kind(), BackendKind::Cli);
  auto n = cli.attach();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 4u); // two begin, one interval, one end; not the uprobe
  EXPECT_TRUE(cli.fires_later());
  EXPECT_TRUE(cli.runs(runtime::ProbeKind::End));
  EXPECT_FALSE(cli.runs(runtime::ProbeKind::Uprobe));
}

TEST(CliBackend, BeginProbesDrainEachAndStopAtExit) {
  Loaded l = load(kScript);
  FakeHost host;
  CliBackend cli(l.bundle, *l.programs, host);
  ASSERT_TRUE(cli.attach());
  host.exit_after = 1;
  ASSERT_TRUE(cli.start());
  EXPECT_EQ(host.drains, 1u); // the second begin probe did not run
  EXPECT_TRUE(host.errors.empty());
}

TEST(CliBackend, IntervalsFireWhenDueAfterAMapSync) {
  Loaded l = load(kScript);
  FakeHost host;
  CliBackend cli(l.bundle, *l.programs, host);
  ASSERT_TRUE(cli.attach());
  ASSERT_TRUE(cli.start());
  EXPECT_EQ(host.drains, 2u);
  const uint64_t t0 = 1000000000;
  // The first call starts the timer: nothing due, 10 ms to wait.
  EXPECT_EQ(cli.fire_due(t0), 10000000u);
  EXPECT_EQ(host.drains, 2u);
  EXPECT_EQ(cli.fire_due(t0 + 4000000), 6000000u);
  EXPECT_EQ(host.syncs, 0u);
  // Due: maps synced, the probe runs, its events drain.
  EXPECT_EQ(cli.fire_due(t0 + 10000000), 10000000u);
  EXPECT_EQ(host.syncs, 1u);
  EXPECT_EQ(host.drains, 3u);
  // Far behind: it fires once, not once per period missed.
  EXPECT_EQ(cli.fire_due(t0 + 95000000), 10000000u);
  EXPECT_EQ(host.drains, 4u);
  cli.detach(); // the end probe
  EXPECT_EQ(host.drains, 5u);
  EXPECT_TRUE(host.errors.empty());
}

TEST(CliBackend, NothingOnATimerNothingToWaitFor) {
  Loaded l = load("BEGIN { exit(); } END { @e = count(); }");
  FakeHost host;
  CliBackend cli(l.bundle, *l.programs, host);
  auto n = cli.attach();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2u);
  EXPECT_FALSE(cli.fires_later());
  EXPECT_EQ(cli.fire_due(1), Backend::kNever);
}

} // namespace
} // namespace ubtrace::backends
