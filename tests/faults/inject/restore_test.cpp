// The borrowed thread comes back exactly (defect 1's class: the state a
// thread had must be its state again): not borrowed inside a restartable
// sequence (the kernel would forget the section when rip moves, and the
// section would run on unaborted once rip is back), and with its own
// errno although dlopen or pthread_create ran on it.
#include "runtime/inject/injector.h"
#include "tests/faults/inject/fault_support.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <sys/wait.h>

namespace ubtrace::test {
namespace {

using namespace runtime::inject;

struct OneThread {
  TestProcess process;
  pid_t tid = 0;
};

std::optional<OneThread> start_one(const std::string &prog) {
  OneThread one{TestProcess::start({fault_prog(prog)}), 0};
  auto ready = one.process.wait_for_line("ready tid=");
  if (!ready)
    return std::nullopt;
  one.tid = static_cast<pid_t>(std::stoi(ready->substr(10)));
  return one;
}

TEST(BorrowedThread, NeverInsideARestartableSequence) {
  auto spin = TestProcess::start({fault_prog("rseq_spin")});
  auto ready = spin.wait_for_line("ready tid=");
  ASSERT_TRUE(ready.has_value());
  pid_t tid = 0;
  unsigned long long start = 0, end = 0;
  ASSERT_EQ(std::sscanf(ready->c_str(), "ready tid=%d start=%llx end=%llx",
                        &tid, &start, &end),
            3)
      << *ready;
  InjectOptions options;
  options.agent_path = test_agent_path();
  options.only_thread = tid;
  options.safe_point_timeout = 200ms;
  // The spinner is nearly always inside its section; briefly outside it
  // after each abort (its handler re-arms the section), where it may be
  // borrowed.
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    options.loader = i % 2 ? LoaderThread::Interrupted : LoaderThread::New;
    auto report = inject_agent(spin.pid(), options);
    if (!report.ok()) {
      EXPECT_NE(report.error().find("inside a restartable sequence"),
                std::string::npos)
          << report.error();
      ++refused;
      continue;
    }
    unsigned long long rip = 0;
    ASSERT_EQ(std::sscanf(report->safe_point.c_str(),
                          "running its own code at %llx", &rip),
              1)
        << report->safe_point;
    EXPECT_TRUE(rip < start || rip >= end)
        << "borrowed inside the section at " << report->safe_point;
  }
  EXPECT_GT(refused, 0);
  spin.write_stdin("q\n");
  auto line = spin.wait_for_line("aborts=");
  ASSERT_TRUE(line.has_value());
  // Every stop aborted the section, and none let it run on unaborted.
  EXPECT_EQ(line->find("aborts=0 "), std::string::npos) << *line;
  EXPECT_NE(line->find("broken=0"), std::string::npos) << *line;
  EXPECT_EQ(spin.wait_exit(), 0);
}

class KeepsErrno : public ::testing::TestWithParam<LoaderThread> {};

TEST_P(KeepsErrno, AcrossTheCallsMadeOnIt) {
  auto keeper = start_one("errno_keeper");
  ASSERT_TRUE(keeper.has_value());
  InjectOptions options;
  options.agent_path = test_agent_path();
  options.only_thread = keeper->tid;
  options.loader = GetParam();
  // The first dlopen of the agent, and later ones of a library that is
  // not there (dlopen fails with errno set).
  auto report = inject_agent(keeper->process.pid(), options);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(report->borrowed_tid, keeper->tid);
  options.agent_path = other_library_path();
  options.entry_symbol = "no_such_entry";
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(inject_agent(keeper->process.pid(), options).ok());
  keeper->process.write_stdin("q\n");
  EXPECT_EQ(keeper->process.read_line(), "errno kept");
  EXPECT_EQ(keeper->process.wait_exit(), 0);
}

// The region's address, chosen from the free address space, may be taken
// by the program before the stub maps it: the stub finds it taken
// (MAP_FIXED_NOREPLACE) and maps nothing, the injector tries elsewhere,
// and it never reads the program's memory there as its block, or writes
// into it.
TEST(Region, AddressTakenByTheProgramIsLeftAlone) {
  const std::string taken = "7e0000000000";
  auto squatter = TestProcess::start({fault_prog("squatter"), taken});
  ASSERT_EQ(squatter.read_line(), "ready");
  auto injector =
      Injector::start({fault_prog("inject_tool"),
                       std::to_string(squatter.pid()), test_agent_path()},
                      {"UBTRACE_TEST_INJECT_REGION=" + taken}, false);
  auto status = injector.wait();
  std::string out = injector.output();
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << out;
  EXPECT_EQ(out.rfind("ok ", 0), 0u) << out;
  squatter.write_stdin("q\n");
  EXPECT_EQ(squatter.read_line(), "intact");
  EXPECT_EQ(squatter.wait_exit(), 0);
}

INSTANTIATE_TEST_SUITE_P(Inject, KeepsErrno,
                         ::testing::Values(LoaderThread::New,
                                           LoaderThread::Interrupted),
                         LoaderName());

} // namespace
} // namespace ubtrace::test
