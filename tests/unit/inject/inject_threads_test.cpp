// The deadlock case: every worker the injector can borrow is busy in
// malloc/free of blocks that take its arena's lock; the main thread waits
// in pthread_join. Injections must all succeed and every thread must keep
// making progress afterwards.
#include "runtime/inject/injector.h"
#include "tests/unit/inject/test_support.h"

#include <csignal>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>
#include <sys/syscall.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;

constexpr int kThreads = 4;

std::vector<long> counts(test::TestProcess &target) {
  target.signal(SIGUSR1);
  auto line = target.wait_for_line("counts ");
  std::vector<long> values;
  if (!line)
    return values;
  std::istringstream in(line->substr(7));
  long value;
  while (in >> value)
    values.push_back(value);
  return values;
}

// Every thread's count passes what it was at the start of the check.
void expect_all_threads_progress(test::TestProcess &target) {
  std::vector<long> before = counts(target);
  ASSERT_EQ(before.size(), static_cast<size_t>(kThreads));
  std::vector<long> now;
  bool all = test::wait_until(
      [&] {
        now = counts(target);
        if (now.size() != before.size())
          return false;
        for (size_t i = 0; i < now.size(); ++i)
          if (now[i] <= before[i])
            return false;
        return true;
      },
      20s);
  EXPECT_TRUE(all) << "a thread stopped making progress (deadlocked?)";
}

// Whether the main thread is in the futex wait of pthread_join (after
// printing "ready" it may still be on its way out of write()).
bool main_thread_joining(pid_t pid) {
  auto nr = test::blocked_syscall(pid, pid);
  return nr && *nr == SYS_futex;
}

class InjectThreads : public ::testing::TestWithParam<LoaderThread> {};

TEST_P(InjectThreads, MallocBusyThreadsAreNeverDeadlocked) {
  auto target = test::TestProcess::start(
      {test::prog_path("malloc_threads"), std::to_string(kThreads)});
  ASSERT_TRUE(target.wait_for_line("ready"));
  ASSERT_TRUE(
      test::wait_until([&] { return main_thread_joining(target.pid()); }, 10s));
  std::map<pid_t, int> borrowed;
  int stops = 0;
  constexpr int kInjections = 50;
  std::vector<pid_t> workers;
  for (pid_t tid : test::thread_ids(target.pid()))
    if (tid != target.pid())
      workers.push_back(tid);
  ASSERT_EQ(workers.size(), static_cast<size_t>(kThreads));
  for (int i = 0; i < kInjections; ++i) {
    InjectOptions options;
    options.agent_path = test::test_agent_path();
    options.entry_symbol = "ubtrace_agent_attach";
    options.entry_argument = "return:" + std::to_string(i);
    options.loader = GetParam();
    // The main thread is parked in pthread_join, a safe point the injector
    // finds first: every other injection is made to borrow a busy worker.
    if (i % 2)
      options.only_thread =
          workers[static_cast<size_t>(i / 2) % workers.size()];
    auto report = inject_agent(target.pid(), options);
    ASSERT_TRUE(report.ok()) << "injection " << i << ": " << report.error();
    EXPECT_EQ(report->entry_result, i);
    if (report->borrowed_tid == target.pid())
      EXPECT_EQ(report->safe_point.rfind("parked in pthread_join", 0), 0u)
          << report->safe_point;
    else // a worker, where it holds no lock
      EXPECT_EQ(report->safe_point.rfind("running its own code", 0), 0u)
          << report->safe_point;
    ++borrowed[report->borrowed_tid];
    stops += report->stops;
  }
  std::cout << "[          ] " << kInjections << " injections borrowed "
            << borrowed.size() << " distinct threads; " << stops
            << " thread stops in all\n";
  expect_all_threads_progress(target);
  target.signal(SIGTERM);
  EXPECT_TRUE(target.wait_for_line("done"));
  EXPECT_EQ(target.wait_exit(), 0);
}

INSTANTIATE_TEST_SUITE_P(Loader, InjectThreads,
                         ::testing::Values(LoaderThread::New,
                                           LoaderThread::Interrupted),
                         test::LoaderName());

// Not run by default (it leaves deadlocked processes behind until it kills
// them, and its outcome is a count, not a pass/fail): the experiment that
// shows why the safe-point rule exists. Each round borrows one busy worker
// wherever it stopped; a borrowed thread that was inside malloc holding its
// arena's lock waits for itself in pthread_create's (or dlopen's) malloc.
// Run with --gtest_also_run_disabled_tests.
TEST(InjectThreadsExperiment, DISABLED_WithoutTheSafePointRuleInjectionsHang) {
  for (LoaderThread mode : {LoaderThread::New, LoaderThread::Interrupted}) {
    int loaded = 0, hung = 0, other = 0;
    for (int round = 0; round < 20; ++round) {
      auto target = test::TestProcess::start(
          {test::prog_path("malloc_threads"), std::to_string(kThreads)});
      ASSERT_TRUE(target.wait_for_line("ready"));
      std::vector<pid_t> tids = test::thread_ids(target.pid());
      InjectOptions options;
      options.agent_path = test::test_agent_path();
      options.loader = mode;
      options.require_safe_point = false;
      options.only_thread = tids.at(1 + round % kThreads); // a worker
      options.load_timeout = 2000ms;
      auto report = inject_agent(target.pid(), options);
      if (report.ok())
        ++loaded;
      else if (report.error().find("timed out") != std::string::npos ||
               report.error().find("did not finish") != std::string::npos)
        ++hung;
      else
        ++other, std::cout << report.error() << "\n";
    }
    std::cout << "[          ] "
              << (mode == LoaderThread::New ? "new thread: " : "interrupted: ")
              << loaded << " loaded, " << hung << " hung, " << other
              << " other errors\n";
  }
}

} // namespace
} // namespace ubtrace::runtime::inject
