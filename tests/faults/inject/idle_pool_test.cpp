// Defect 21: a process whose every thread is parked in glibc's waits
// (pthread_cond_wait/timedwait, pthread_join, sem_wait/timedwait,
// pthread_mutex_lock of a held mutex, pthread_barrier_wait, a rwlock) can
// be injected: each such thread is a safe point, found by unwinding it
// through libc's CFI out to the function the program called; a thread
// waiting for a lock inside glibc's own code (fprintf blocked on a FILE's
// lock) is not. The waits go on as they would have: nobody wakes early,
// the signalled and broadcast ones wake, the timed one times out at its
// deadline.
#include "runtime/inject/injector.h"
#include "runtime/inject/ptrace_thread.h"
#include "runtime/inject/safe_point.h"
#include "tests/faults/inject/fault_support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/syscall.h>

namespace ubtrace::test {
namespace {

using namespace runtime::inject;

// The function each thread parks in, by the role idle_pool gives it.
const std::map<std::string, std::string> kParkedIn = {
    {"main", "pthread_join"},
    {"waker", "sem_wait"},
    {"cond", "pthread_cond_wait"},
    {"bcast", "pthread_cond_wait"},
    {"timed", "pthread_cond_timedwait"},
    {"semtimed", "sem_timedwait"},
    {"mutex", "pthread_mutex_lock"},
    {"barrier", "pthread_barrier_wait"},
    {"rwlock", "pthread_rwlock_rdlock"},
    {"flocker", "pthread_cond_wait"},
};

struct IdlePool {
  TestProcess process;
  std::map<std::string, pid_t> threads;

  // Wakes everyone (SIGUSR1) and returns the "done" line; the process must
  // exit 0 (every thread woke once, the timed wait timed out at its
  // deadline).
  std::optional<std::string> wake() {
    process.signal(SIGUSR1);
    auto done = process.wait_for_line("done", 30s);
    auto status = process.wait_exit(30s);
    EXPECT_EQ(status, 0) << (done ? *done : "no done line");
    return done;
  }
};

std::optional<IdlePool> start_idle_pool(int timed_seconds) {
  IdlePool pool{TestProcess::start(
                    {fault_prog("idle_pool"), std::to_string(timed_seconds)}),
                {}};
  auto ready = pool.process.wait_for_line("ready ");
  if (!ready)
    return std::nullopt;
  std::istringstream in(ready->substr(6));
  for (std::string word; in >> word;)
    if (size_t eq = word.find('='); eq != std::string::npos)
      pool.threads[word.substr(0, eq)] =
          static_cast<pid_t>(std::stoi(word.substr(eq + 1)));
  // Every one of them asleep in a futex (the printer too, inside fprintf).
  pid_t pid = pool.process.pid();
  bool parked = wait_until([&] {
    for (auto [role, tid] : pool.threads)
      if (blocked_syscall(pid, tid) != SYS_futex)
        return false;
    return true;
  });
  if (!parked || pool.threads.size() != kParkedIn.size() + 1)
    return std::nullopt;
  return pool;
}

TEST(IdlePool, EveryParkedThreadIsASafePoint) {
  auto pool = start_idle_pool(3);
  ASSERT_TRUE(pool.has_value());
  pid_t pid = pool->process.pid();
  auto glibc = TargetGlibc::locate(pid);
  ASSERT_TRUE(glibc.ok()) << glibc.error();
  auto memory = RemoteMemory::open(pid);
  ASSERT_TRUE(memory.ok());
  SafePoints rules(*glibc);
  for (auto [role, tid] : pool->threads) {
    auto thread = PtraceThread::seize(pid, tid);
    ASSERT_TRUE(thread.ok()) << thread.error();
    ASSERT_TRUE(thread->interrupt(Deadline(5000ms)).ok());
    auto regs = thread->registers();
    ASSERT_TRUE(regs.ok());
    SafePoint where = rules.classify(*regs, *memory);
    ASSERT_TRUE(thread->detach().ok());
    if (role == "printer") {
      EXPECT_FALSE(where.safe) << role << ": " << where.reason;
      EXPECT_EQ(where.reason.rfind("inside glibc (", 0), 0u) << where.reason;
      continue;
    }
    EXPECT_TRUE(where.safe) << role << ": " << where.reason;
    EXPECT_EQ(where.reason.rfind("parked in " + kParkedIn.at(role) + " (", 0),
              0u)
        << role << ": " << where.reason;
  }
  auto done = pool->wake();
  ASSERT_TRUE(done.has_value());
  EXPECT_NE(done->find("timed=ok"), std::string::npos) << *done;
}

class IdlePoolInjection : public ::testing::TestWithParam<LoaderThread> {};

TEST_P(IdlePoolInjection, EveryParkedThreadCanBeBorrowed) {
  const bool interrupted = GetParam() == LoaderThread::Interrupted;
  auto pool = start_idle_pool(5);
  ASSERT_TRUE(pool.has_value());
  pid_t pid = pool->process.pid();
  InjectOptions options;
  options.agent_path = test_agent_path();
  options.loader = GetParam();
  // Any thread: all are parked.
  auto any = inject_agent(pid, options);
  ASSERT_TRUE(any.ok()) << any.error();
  EXPECT_EQ(any->safe_point.rfind("parked in ", 0), 0u) << any->safe_point;
  for (auto [role, tid] : pool->threads) {
    options.only_thread = tid;
    bool refused = role == "printer" ||
                   (interrupted && (role == "timed" || role == "semtimed"));
    options.safe_point_timeout = refused ? 300ms : 5000ms;
    auto report = inject_agent(pid, options);
    if (refused) {
      EXPECT_FALSE(report.ok()) << role << " was borrowed";
      continue;
    }
    ASSERT_TRUE(report.ok()) << role << ": " << report.error();
    EXPECT_EQ(report->borrowed_tid, tid);
    EXPECT_EQ(report->safe_point.rfind("parked in " + kParkedIn.at(role), 0),
              0u)
        << role << ": " << report->safe_point;
  }
  // The waits went on: nobody woke before the signal (each woke once),
  // and the timed wait timed out at its deadline.
  auto done = pool->wake();
  ASSERT_TRUE(done.has_value());
  EXPECT_NE(done->find("timed=ok"), std::string::npos) << *done;
}

// A sibling: threads blocked in system call wrappers that hold no glibc
// lock (flock, lockf, fcntl F_SETLKW, mq_timedreceive, splice, sigwait)
// are safe points too, and each call still succeeds once released.
TEST(BlockingWrappers, AreSafePointsAndTheirCallsStillSucceed) {
  auto process = TestProcess::start({fault_prog("blocking_wrappers")});
  auto ready = process.wait_for_line("ready ");
  ASSERT_TRUE(ready.has_value());
  std::map<std::string, pid_t> threads;
  std::istringstream in(ready->substr(6));
  for (std::string word; in >> word;)
    if (size_t eq = word.find('='); eq != std::string::npos)
      threads[word.substr(0, eq)] =
          static_cast<pid_t>(std::stoi(word.substr(eq + 1)));
  ASSERT_EQ(threads.size(), 6u);
  pid_t pid = process.pid();
  ASSERT_TRUE(wait_until([&] {
    for (auto [name, tid] : threads)
      if (blocked_syscall(pid, tid).value_or(-1) < 0)
        return false;
    return true;
  }));
  InjectOptions options;
  options.agent_path = test_agent_path();
  for (auto [name, tid] : threads) {
    options.only_thread = tid;
    auto report = inject_agent(pid, options);
    ASSERT_TRUE(report.ok()) << name << ": " << report.error();
    EXPECT_EQ(report->safe_point.rfind("blocked in libc.so.6:", 0), 0u)
        << name << ": " << report->safe_point;
  }
  process.write_stdin("go\n");
  EXPECT_EQ(process.wait_for_line("done"), "done 6");
  EXPECT_EQ(process.wait_exit(), 0);
}

INSTANTIATE_TEST_SUITE_P(Inject, IdlePoolInjection,
                         ::testing::Values(LoaderThread::New,
                                           LoaderThread::Interrupted),
                         LoaderName());

} // namespace
} // namespace ubtrace::test
