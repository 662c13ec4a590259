// Defect 1 through the real CLI: `ubtrace -p` SIGKILLed right after each
// step of the injection, then at random moments of its whole run
// (compiling, injecting, tracing), against the steady target, which must
// run on unharmed; the agents those CLIs left behind must not harm it
// either, and must not keep a later `ubtrace -p` from attaching and
// tracing it.
#include "runtime/inject/inject_steps.h"
#include "tests/faults/inject/fault_support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <random>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>

namespace ubtrace::test {
namespace {

using runtime::inject::inject_step_name;
using runtime::inject::InjectStep;
using runtime::inject::kInjectSteps;

std::vector<std::string> cli_argv(pid_t pid) {
  return {
      UBT_CLI, "-p", std::to_string(pid), "-e",
      "uprobe:libc:nanosleep { @n = count(); } interval:ms:300 { exit(); }"};
}

TEST(CliKilledDuringAttach, TargetRunsOnAndCanBeTracedAfterwards) {
  auto target = start_steady_target();
  ASSERT_TRUE(target.has_value());
  pid_t pid = target->process.pid();
  const size_t own_threads = target->threads.size();
  std::string why;

  for (int step = 1; step <= kInjectSteps; ++step) {
    std::string label =
        "after " + std::string(inject_step_name(InjectStep(step)));
    auto cli = Injector::start(
        cli_argv(pid), {"UBTRACE_TEST_INJECT_STOP=" + std::to_string(step)},
        true);
    auto status = cli.wait();
    ASSERT_TRUE(status.has_value()) << label;
    ASSERT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL)
        << label << ": " << cli.output();
    EXPECT_EQ(cli.last_step(), step) << label;
    ASSERT_TRUE(alive(pid)) << label << ": the target died";
    ASSERT_TRUE(wait_settled(pid, own_threads, why)) << label << ": " << why;
  }

  std::mt19937 random(7);
  std::vector<int> landed(kInjectSteps + 1, 0);
  constexpr int kRandomKills = 40;
  for (int cycle = 0; cycle < kRandomKills; ++cycle) {
    auto cli = Injector::start(cli_argv(pid), {}, true);
    // Half of them within the injection, the others anywhere in the run.
    if (cycle % 2 == 0 && cli.wait_step(int(InjectStep::Located)))
      std::this_thread::sleep_for(std::chrono::microseconds(random() % 4000));
    else
      std::this_thread::sleep_for(std::chrono::microseconds(random() % 400000));
    cli.kill();
    ASSERT_TRUE(cli.wait().has_value());
    ++landed[cli.last_step()];
    ASSERT_TRUE(alive(pid)) << "cycle " << cycle << ": the target died";
    ASSERT_TRUE(wait_settled(pid, own_threads, why))
        << "cycle " << cycle << ": " << why;
  }
  std::cout << "[          ] random kills, last injection step:";
  for (int step = 0; step <= kInjectSteps; ++step)
    std::cout << " " << step << "=" << landed[step];
  std::cout << "\n";

  // A CLI that is left alone attaches and traces.
  auto cli = Injector::start(cli_argv(pid), {}, false);
  auto status = cli.wait();
  std::string out = cli.output();
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << out;
  EXPECT_NE(out.find("@n: "), std::string::npos) << out;
  EXPECT_EQ(out.find("@n: 0"), std::string::npos) << out;

  ASSERT_TRUE(wait_settled(pid, own_threads, why)) << why;
  auto [last, ok] = target->finish();
  EXPECT_EQ(last, "ok");
  EXPECT_TRUE(ok);
}

// Defect 21 through the CLI: every thread of the idle pool is parked in a
// glibc wait, `ubtrace -p` attaches all the same, and its probe sees every
// thread's work() once they are woken.
TEST(CliAttach, IdlePoolWhoseThreadsAreAllParked) {
  auto pool = TestProcess::start({fault_prog("idle_pool"), "5"});
  ASSERT_TRUE(pool.wait_for_line("ready "));
  pid_t pid = pool.pid();
  ASSERT_TRUE(wait_until([&] {
    for (pid_t tid : thread_ids(pid))
      if (blocked_syscall(pid, tid) != SYS_futex)
        return false;
    return true;
  }));
  // stderr too: "Attached N probes" says when to wake the pool.
  auto cli = TestProcess::start(
      {UBT_CLI, "-p", std::to_string(pid), "-e",
       "uprobe:" + fault_prog("idle_pool") + ":work { @[arg0] = count(); }"},
      {}, {{1, 2}});
  ASSERT_TRUE(cli.wait_for_line("Attached", 30s));
  pool.signal(SIGUSR1);
  auto done = pool.wait_for_line("done", 30s);
  ASSERT_TRUE(done.has_value());
  EXPECT_NE(done->find("timed=ok"), std::string::npos) << *done;
  EXPECT_EQ(pool.wait_exit(30s), 0);
  // The target is gone: the CLI prints its map and ends.
  auto lines = cli.read_remaining(30s);
  EXPECT_EQ(cli.wait_exit(30s), 0);
  std::string out;
  for (const std::string &line : lines)
    out += line + "\n";
  for (int role = 0; role < 10; ++role)
    EXPECT_NE(out.find("@[" + std::to_string(role) + "]: 1\n"),
              std::string::npos)
        << "role " << role << " in\n"
        << out;
}

} // namespace
} // namespace ubtrace::test
