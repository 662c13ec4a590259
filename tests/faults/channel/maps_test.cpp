// Defect 9, end to end: a traced program writes over its own mapping of the
// maps region (random bytes, or values crafted to mislead: huge sizes and
// offsets, bucket words naming entries that do not exist, looping free
// lists, ring positions running backwards or far ahead, records with huge
// lengths, loss counters at 2^64-1, the slot table) while its threads hit
// probes and the CLI's own probes (interval, END) read and write the same
// maps and the ring. ubtrace used to segfault in the map reader, spin in
// the ring's compare-and-swap loop ignoring SIGTERM, and print "Lost
// 18446744073709551615 events". It must end normally, print the maps, and
// say the data was written over; and end on SIGTERM while the writing goes
// on.
#include "tests/faults/channel/support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <sys/wait.h>

namespace ubtrace::faults {
namespace {

std::string script() {
  const std::string prog = fault_prog("chan_scribbler");
  return "uprobe:" + prog +
         ":chan_hit { @h[arg0 % 97] = count(); @c = count(); "
         "@s[arg0 % 5] = sum(arg0); @hist = hist(arg0 % 1000); "
         "@lru[arg0 % 3000] = arg0; "
         "if (arg0 % 5000 == 0) { printf(\"hit %d\\n\", arg0); } } "
         "interval:ms:50 { @ticks = count(); @cli[nsecs % 13] = 1; "
         "print(@s); clear(@cli); delete(@h[1]); printf(\"tick\\n\"); } "
         "END { @end[1] = 2; print(@c); }";
}

struct TraceRun {
  std::string out, err;
  std::optional<int> status;
};

TraceRun trace(const std::string &args) {
  Child cli =
      Child::start({ubtrace_binary(), "-c",
                    fault_prog("chan_scribbler") + " " + args, "-e", script()});
  TraceRun r;
  r.status = cli.wait_exit(60s);
  r.out = cli.all_stdout();
  r.err = cli.all_stderr();
  return r;
}

// ubtrace ended by itself (no signal), printed the maps at the end, and no
// counter the target wrote over was printed as a count. (The target may
// have crashed on its own writes: its probes use the headers it wrote
// over. That is its business; the trace must not go down with it.)
void expect_survived(const TraceRun &r) {
  ASSERT_TRUE(r.status) << "ubtrace hung";
  EXPECT_TRUE(WIFEXITED(*r.status)) << describe_status(*r.status) << "\n"
                                    << r.err;
  EXPECT_NE(r.out.find("region "), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("\n\n"), std::string::npos) << r.out << r.err;
  EXPECT_EQ((r.out + r.err).find("Lost 1844674407370955"), std::string::npos)
      << r.err;
}

class ScribbledRegion
    : public ::testing::TestWithParam<std::pair<const char *, int>> {};

TEST_P(ScribbledRegion, TraceEndsNormallyAndSaysSo) {
  const auto [mode, seed] = GetParam();
  TraceRun r = trace(std::string(mode) + " " + std::to_string(seed) + " 400");
  expect_survived(r);
  // Crafted writes start with the region header (chan_scribbler.cpp): the
  // CLI must say so.
  if (std::string(mode) != "random")
    EXPECT_NE(r.err.find("wrote over ubtrace's shared memory"),
              std::string::npos)
        << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ScribbledRegion,
    ::testing::Values(std::make_pair("random", 1), std::make_pair("random", 2),
                      std::make_pair("crafted", 1),
                      std::make_pair("crafted", 2),
                      std::make_pair("crafted", 3),
                      std::make_pair("crafted", 4), std::make_pair("mixed", 1),
                      std::make_pair("mixed", 2)),
    [](const auto &info) {
      return std::string(info.param.first) + std::to_string(info.param.second);
    });

TEST(ScribbledRegionSignal, CliEndsOnSigtermWhileTheTargetWrites) {
  Child cli =
      Child::start({ubtrace_binary(), "-c",
                    fault_prog("chan_scribbler") + " survivable 7 300 forever",
                    "-e", script()});
  ASSERT_TRUE(cli.wait_for_line("scribbling", 60s)) << cli.all_stderr();
  cli.signal(SIGTERM);
  auto status = cli.wait_exit(30s);
  ASSERT_TRUE(status) << "ubtrace did not end on SIGTERM";
  TraceRun r{cli.all_stdout(), cli.all_stderr(), status};
  expect_survived(r);
}

} // namespace
} // namespace ubtrace::faults
