// The words and wire formats of the lifecycle reports, without a target:
// the named values the agent sends (a hostile agent's truncated lists stop
// at the first entry that does not fit), the loss sentences, and the
// sentence for each way a process ends.
#include "backends/loss_report.h"
#include "backends/userspace/process_end.h"
#include "runtime/agent/agent_counters.h"
#include "runtime/agent/named_values.h"

#include <gtest/gtest.h>

namespace ubtrace::backends {
namespace {

TEST(NamedValues, RoundTrip) {
  std::vector<uint8_t> p = {9, 9}; // a prefix the reader skips
  agent::append_named_value(p, "a", 1);
  agent::append_named_value(p, "", 2);
  agent::append_named_value(p, "longer name", UINT64_MAX);
  auto v = agent::read_named_values(p, 2);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], (std::pair<std::string, uint64_t>{"a", 1}));
  EXPECT_EQ(v[1], (std::pair<std::string, uint64_t>{"", 2}));
  EXPECT_EQ(v[2],
            (std::pair<std::string, uint64_t>{"longer name", UINT64_MAX}));
}

TEST(NamedValues, TruncatedOrLyingLengthsStop) {
  std::vector<uint8_t> p;
  agent::append_named_value(p, "kept", 7);
  agent::append_named_value(p, "cut", 8);
  for (size_t cut = 0; cut < 4 + 3 + 8; cut++) {
    std::vector<uint8_t> q(p.begin(), p.end() - static_cast<long>(cut) - 1);
    auto v = agent::read_named_values(q);
    ASSERT_EQ(v.size(), 1u) << cut;
    EXPECT_EQ(v[0].first, "kept");
  }
  std::vector<uint8_t> lie = {0xff, 0xff, 0xff, 0xff, 1, 2, 3};
  EXPECT_TRUE(agent::read_named_values(lie).empty());
}

TEST(LossReport, SentencesByCount) {
  agent::NamedValues counters = {{agent::counter::kNestedSkips, 1},
                                 {agent::counter::kShadowOverflows, 0},
                                 {agent::counter::kRefusedClaims, 3},
                                 {kRegionSlotExhausted, 2},
                                 {"from_a_newer_agent", 5}};
  auto lines = describe_losses(counters, {512, 1000, 64});
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].message, "1 probe hit skipped: nested in a signal handler "
                              "or in another probe's run");
  EXPECT_EQ(lines[0].reason, "nested");
  EXPECT_EQ(lines[1].message,
            "3 probe hits skipped: no hook state left for the thread "
            "(1000 threads at once)");
  EXPECT_EQ(lines[2].message,
            "2 probe hits lost map updates or events: no thread slot "
            "left (512 threads at once)");
  EXPECT_EQ(lines[2].reason, "thread_slot");
  EXPECT_EQ(lines[3].message, "5 probe hits lost (from_a_newer_agent)");
  EXPECT_EQ(lines[3].count, 5u);
}

TEST(ProcessEnd, Sentences) {
  using runtime::inject::ExitStatus;
  ProcessEnd e{123, "app", ExitStatus::from_wait_status(11 | 0x80)};
  EXPECT_EQ(describe(e),
            "Process 123 (app) was killed by signal 11 (SIGSEGV), core dumped");
  e.status = ExitStatus::from_wait_status(3 << 8);
  EXPECT_EQ(describe(e), "Process 123 (app) exited with code 3");
  e.status.reset();
  EXPECT_EQ(
      describe(e),
      "Process 123 (app) ended (its parent collected its exit status first)");
  e.comm.clear();
  EXPECT_EQ(describe(e),
            "Process 123 ended (its parent collected its exit status first)");
}

} // namespace
} // namespace ubtrace::backends
