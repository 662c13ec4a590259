// Many injections into fresh processes: all must succeed and every target
// must finish with its own output and exit code intact; and injections
// racing a process that exits by itself must end cleanly either way.
#include "runtime/inject/injector.h"
#include "tests/unit/inject/test_support.h"

#include <gtest/gtest.h>
#include <map>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;

TEST(InjectStress, TwoHundredCyclesAcrossFreshProcesses) {
  constexpr int kCycles = 200;
  int failures = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    auto target = test::TestProcess::start({test::prog_path("counter_loop")});
    ASSERT_EQ(target.read_line(), "tick 0") << "cycle " << cycle;
    InjectOptions options;
    options.agent_path = test::test_agent_path();
    options.entry_symbol = "ubtrace_agent_attach";
    options.entry_argument = "return:" + std::to_string(cycle);
    options.loader =
        cycle % 2 == 0 ? LoaderThread::New : LoaderThread::Interrupted;
    auto report = inject_agent(target.pid(), options);
    if (!report.ok() || report->entry_result != cycle) {
      ++failures;
      ADD_FAILURE() << "cycle " << cycle << ": "
                    << (report.ok() ? "wrong entry result" : report.error());
    }
    target.write_stdin("q");
    // Every tick, in order, then its normal end.
    long expected = 1;
    bool complete = false;
    while (auto line = target.read_line()) {
      if (line->rfind("done ticks=", 0) == 0) {
        complete = *line == "done ticks=" + std::to_string(expected - 1);
        break;
      }
      if (*line != "tick " + std::to_string(expected++))
        break;
    }
    EXPECT_TRUE(complete) << "cycle " << cycle << ": output damaged";
    EXPECT_EQ(target.wait_exit(), 0) << "cycle " << cycle;
  }
  EXPECT_EQ(failures, 0);
}

// Started and injected at once, while the loader may still be setting the
// process up, and exiting by itself after 0..4 ticks: whichever comes
// first, the outcome is a loaded agent or a clean error, never a hang, a
// crash or a damaged program.
TEST(InjectStress, ProcessesThatExitOnTheirOwnEndCleanly) {
  std::minstd_rand random(12345);
  std::map<std::string, int> outcomes;
  for (int cycle = 0; cycle < 100; ++cycle) {
    int ticks = static_cast<int>(random() % 5);
    auto target = test::TestProcess::start(
        {test::prog_path("counter_loop"), std::to_string(ticks)});
    // Past the fork: the program itself, not a copy of this test.
    ASSERT_TRUE(test::wait_until([&] {
      char exe[4096] = {};
      std::string link = "/proc/" + std::to_string(target.pid()) + "/exe";
      ssize_t n = ::readlink(link.c_str(), exe, sizeof exe - 1);
      if (n > 0)
        return std::string(exe, static_cast<size_t>(n)) ==
               test::prog_path("counter_loop");
      // Already exited (a zombie has no executable any more).
      return test::read_file("/proc/" + std::to_string(target.pid()) + "/stat")
                 .find(") Z ") != std::string::npos;
    }));
    InjectOptions options;
    options.agent_path = test::test_agent_path();
    options.loader =
        cycle % 2 == 0 ? LoaderThread::New : LoaderThread::Interrupted;
    auto report = inject_agent(target.pid(), options);
    std::string outcome = "loaded";
    if (!report.ok()) {
      const std::string &e = report.error();
      if (e.find("exited during injection") != std::string::npos)
        outcome = "exited during injection";
      else if (e.find("has exited") != std::string::npos ||
               e.find("no such process") != std::string::npos)
        outcome = "exited before injection";
      else
        ADD_FAILURE() << "cycle " << cycle << ": " << e;
    }
    ++outcomes[outcome];
    // However the race went, the program printed all its ticks and ended
    // normally (unless the injector, as the tracer of the exiting thread,
    // reaped it: then it said so).
    std::vector<std::string> lines = target.read_remaining();
    std::vector<std::string> expected;
    for (int t = 0; t < ticks; ++t)
      expected.push_back("tick " + std::to_string(t));
    expected.push_back("done ticks=" + std::to_string(ticks));
    EXPECT_EQ(lines, expected) << "cycle " << cycle;
    auto status = target.wait_exit(10s);
    if (status)
      EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
          << "cycle " << cycle << " status " << *status;
    else
      EXPECT_EQ(outcome, "exited during injection") << "cycle " << cycle;
  }
  for (const auto &[outcome, count] : outcomes)
    std::cout << "[          ] " << count << " x " << outcome << "\n";
}

} // namespace
} // namespace ubtrace::runtime::inject
