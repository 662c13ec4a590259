// Defect 1: the injector killed (SIGKILL) right after each step of the
// protocol, for each kind of thread it may borrow, in both loader modes,
// and paused there first with the target running on (a slowed injector):
// the target must run on unharmed. The steady target checks its own
// threads all along (registers, full sleeps, no spurious wakeups, exact
// timeouts, its blocked read) and says at the end whether all held.
#include "runtime/inject/inject_steps.h"
#include "tests/faults/inject/fault_support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <sys/wait.h>

namespace ubtrace::test {
namespace {

using runtime::inject::inject_step_name;
using runtime::inject::InjectStep;
using runtime::inject::kInjectSteps;

struct Case {
  bool interrupted;
  bool pause;
};

void PrintTo(const Case &c, std::ostream *out) {
  *out << (c.interrupted ? "interrupted" : "new thread")
       << (c.pause ? ", paused first" : "");
}

class KillAtEveryStep : public ::testing::TestWithParam<Case> {};

TEST_P(KillAtEveryStep, TargetRunsOnUnharmed) {
  auto target = start_steady_target();
  ASSERT_TRUE(target.has_value());
  pid_t pid = target->process.pid();
  const size_t own_threads = target->threads.size();
  // The threads the injector can borrow: in the Interrupted mode not the
  // sleeper and the timed waiter, whose waits resume through
  // restart_syscall.
  std::vector<std::string> roles = {"main", "crunch", "waiter"};
  if (!GetParam().interrupted)
    roles.insert(roles.end(), {"sleeper", "timed"});
  int runs = 0;
  for (const std::string &role : roles) {
    for (int step = 1; step <= kInjectSteps; ++step) {
      std::string label =
          role + " after " + std::string(inject_step_name(InjectStep(step)));
      std::vector<std::string> argv = {fault_prog("inject_tool"),
                                       std::to_string(pid),
                                       test_agent_path(),
                                       "--thread",
                                       std::to_string(target->threads.at(role)),
                                       "--timeout",
                                       "10000"};
      if (GetParam().interrupted)
        argv.push_back("--interrupted");
      std::string stop = "UBTRACE_TEST_INJECT_STOP=" + std::to_string(step) +
                         (GetParam().pause ? ":pause" : "");
      auto injector = Injector::start(argv, {stop}, true);
      if (GetParam().pause) {
        ASSERT_TRUE(injector.wait_stopped())
            << label << ": " << injector.output();
        // Held there while the target runs on: its threads go on (the
        // sleeper's next 20 ms sleep, the crunch loop) around the one that
        // is held, and the held one may be the sleeper itself.
        ASSERT_TRUE(alive(pid)) << label;
        // The region stays until its results are acked or the injector
        // is gone (which is what wait_settled then sees).
        if (step == int(InjectStep::RegionSeen) ||
            step == int(InjectStep::ResultSeen))
          EXPECT_EQ(injection_regions(pid), 1) << label;
        injector.kill();
      }
      auto status = injector.wait();
      ASSERT_TRUE(status.has_value()) << label;
      ASSERT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL)
          << label << ": the injector ended without reaching the step ("
          << injector.output() << ")";
      EXPECT_EQ(injector.last_step(), step) << label;
      ASSERT_TRUE(alive(pid)) << label << ": the target died";
      std::string why;
      ASSERT_TRUE(wait_settled(pid, own_threads, why))
          << label << ": " << why << "\n"
          << signal_state(pid);
      ++runs;
    }
  }
  auto [last, ok] = target->finish();
  EXPECT_EQ(last, "ok");
  EXPECT_TRUE(ok);
  std::cout << "[          ] " << runs << " injectors killed, one per step "
            << "and thread\n";
}

INSTANTIATE_TEST_SUITE_P(
    Inject, KillAtEveryStep,
    ::testing::Values(Case{false, false}, Case{true, false}, Case{false, true},
                      Case{true, true}),
    [](const auto &info) {
      return std::string(info.param.interrupted ? "Interrupted" : "NewThread") +
             (info.param.pause ? "Paused" : "");
    });

} // namespace
} // namespace ubtrace::test
