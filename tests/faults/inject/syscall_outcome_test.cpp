// Defect 1's other half: the thread the injector borrows was blocked in a
// system call, and the call must end exactly as it would have without the
// injection: a read still gets its data, a relative sleep sleeps its full
// time (it resumes through restart_syscall with the time it had left), a
// futex wait still waits (and a timed one times out at its absolute
// deadline), epoll_pwait and sigsuspend keep the thread's own signal mask.
// And a signal that arrives while the injector holds the thread (it is
// paused right after the commit) has the effect the kernel gives it for a
// thread that was merely stopped there: the same outcome line as a plain
// PTRACE_INTERRUPT stop with the signal sent meanwhile (the oracle).
#include "runtime/inject/inject_steps.h"
#include "runtime/inject/ptrace_thread.h"
#include "tests/faults/inject/fault_support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <sys/syscall.h>
#include <sys/wait.h>

namespace ubtrace::test {
namespace {

using runtime::inject::Deadline;
using runtime::inject::inject_step_name;
using runtime::inject::InjectStep;
using runtime::inject::PtraceThread;

struct Call {
  const char *name;
  long nr;            // what /proc shows it blocked in
  bool wake;          // ends with "wake" (else by itself, or by SIGUSR1)
  bool signal;        // sigsuspend: ends with SIGUSR1
  bool restart_block; // resumes through restart_syscall
};

constexpr Call kCalls[] = {
    {"read", SYS_read, true, false, false},
    {"nanosleep", SYS_nanosleep, false, false, true},
    {"clock_nanosleep", SYS_clock_nanosleep, false, false, true},
    {"futex", SYS_futex, true, false, false},
    {"futex_timed", SYS_futex, false, false, true},
    {"epoll_pwait", SYS_epoll_pwait, true, false, false},
    {"sigsuspend", SYS_rt_sigsuspend, false, true, false},
};

void PrintTo(const Call &call, std::ostream *out) {
  *out << call.name;
}

std::map<std::string, std::string> fields(const std::string &line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  in >> out["call"];
  while (in >> word)
    if (size_t eq = word.find('='); eq != std::string::npos)
      out[word.substr(0, eq)] = word.substr(eq + 1);
  return out;
}

struct Blocked {
  TestProcess process;
  pid_t tid;
  std::string call; // its /proc/PID/task/TID/syscall line, blocked
};

std::string syscall_line(pid_t pid, pid_t tid) {
  return read_file("/proc/" + std::to_string(pid) + "/task/" +
                   std::to_string(tid) + "/syscall");
}

// Asleep: a thread that only entered the call again (a restart after a
// signal handler) shows it in /proc before it has checked the futex word
// and slept; woken then, the restarted wait saw the word changed (EAGAIN),
// which made the kernel's answer and ubtrace's differ by timing alone.
bool sleeping(pid_t pid, pid_t tid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/task/" +
                               std::to_string(tid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() &&
         stat[paren + 2] == 'S';
}

// Blocked again in the call it was in: the same arguments, stack and pc
// (a call resumed through restart_syscall shows that number instead), and
// asleep in it.
bool back_in_call(const Blocked &blocked) {
  if (!sleeping(blocked.process.pid(), blocked.tid))
    return false;
  std::string now = syscall_line(blocked.process.pid(), blocked.tid);
  size_t a = blocked.call.find(' '), b = now.find(' ');
  if (a == std::string::npos || b == std::string::npos)
    return false;
  std::string nr = now.substr(0, b);
  return (nr == blocked.call.substr(0, a) ||
          nr == std::to_string(SYS_restart_syscall)) &&
         now.substr(b) == blocked.call.substr(a);
}

std::optional<Blocked> start_blocked(const Call &call, bool sa_restart) {
  std::vector<std::string> argv = {fault_prog("blocked_call"), call.name};
  if (sa_restart)
    argv.push_back("restart");
  Blocked blocked{TestProcess::start(argv), 0, ""};
  auto ready = blocked.process.wait_for_line("ready tid=");
  if (!ready)
    return std::nullopt;
  blocked.tid = static_cast<pid_t>(std::stoi(ready->substr(10)));
  if (!wait_until([&] {
        return blocked_syscall(blocked.process.pid(), blocked.tid) == call.nr;
      }))
    return std::nullopt;
  blocked.call = syscall_line(blocked.process.pid(), blocked.tid);
  return blocked;
}

std::vector<std::string> tool_argv(pid_t pid, pid_t tid, bool interrupted) {
  std::vector<std::string> argv = {fault_prog("inject_tool"),
                                   std::to_string(pid), test_agent_path(),
                                   "--thread", std::to_string(tid)};
  if (interrupted)
    argv.push_back("--interrupted");
  return argv;
}

// Ends the call the way it ends (if it needs help) and returns its line.
std::optional<std::string> outcome(Blocked &blocked, const Call &call) {
  // The call may have ended already (EINTR); if not, it is woken once it
  // is back in its wait (woken before, a futex wait would see the word
  // changed and fail with EAGAIN: a race of the test, not the program's).
  std::optional<std::string> line;
  auto end = std::chrono::steady_clock::now() + 30s;
  while (!line && std::chrono::steady_clock::now() < end) {
    if (back_in_call(blocked)) {
      if (call.wake)
        blocked.process.write_stdin("wake\n");
      if (call.signal)
        ::kill(blocked.process.pid(), SIGUSR1);
      line = blocked.process.wait_for_line(call.name);
      break;
    }
    if (auto next = blocked.process.read_line(5ms))
      if (next->rfind(call.name, 0) == 0)
        line = next;
  }
  blocked.process.write_stdin("quit\n");
  EXPECT_EQ(blocked.process.wait_exit(), 0);
  return line;
}

class BlockedCall : public ::testing::TestWithParam<std::tuple<Call, bool>> {};

TEST_P(BlockedCall, EndsAsItWouldHave) {
  auto [call, interrupted] = GetParam();
  auto blocked = start_blocked(call, false);
  ASSERT_TRUE(blocked.has_value());
  auto argv = tool_argv(blocked->process.pid(), blocked->tid, interrupted);
  // The Interrupted mode does not borrow a thread whose call resumes
  // through restart_syscall: it says so, and the call is not disturbed.
  bool refused = interrupted && call.restart_block;
  if (refused)
    argv.insert(argv.end(), {"--timeout", "300"});
  auto injector = Injector::start(argv, {}, false);
  auto status = injector.wait();
  std::string out = injector.output();
  if (refused) {
    ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 1)
        << out;
    EXPECT_NE(out.find("resumes through restart_syscall"), std::string::npos)
        << out;
  } else {
    ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << out;
  }
  // Back in the same call (epoll_pwait's EINTR, which a stop alone causes,
  // is retried by the program).
  ASSERT_TRUE(wait_until([&] { return back_in_call(*blocked); }))
      << "was: " << blocked->call
      << "now: " << syscall_line(blocked->process.pid(), blocked->tid);
  auto line = outcome(*blocked, call);
  ASSERT_TRUE(line.has_value());
  auto got = fields(*line);
  EXPECT_EQ(got["early"], "0") << *line;
  EXPECT_EQ(got["mask"], "same") << *line;
  if (call.signal) {
    EXPECT_EQ(got["rc"], "-1") << *line;
    EXPECT_EQ(got["errno"], "EINTR") << *line;
    EXPECT_EQ(got["handled"], "1") << *line;
  } else if (std::string(call.name) == "futex_timed") {
    EXPECT_EQ(got["errno"], "ETIMEDOUT") << *line;
    EXPECT_EQ(got["full"], "1") << *line;
  } else {
    EXPECT_EQ(got["errno"], "0") << *line;
    EXPECT_EQ(got["handled"], "0") << *line;
    if (call.restart_block)
      EXPECT_EQ(got["full"], "1") << *line;
  }
}

// The kernel's answer: the thread only stopped, the signal sent meanwhile.
std::optional<std::string> oracle(const Call &call, bool sa_restart) {
  auto blocked = start_blocked(call, sa_restart);
  if (!blocked)
    return std::nullopt;
  auto thread = PtraceThread::seize(blocked->process.pid(), blocked->tid);
  if (!thread || !thread->interrupt(Deadline(5000ms)))
    return std::nullopt;
  ::kill(blocked->process.pid(), SIGUSR1);
  if (!thread->detach())
    return std::nullopt;
  return outcome(*blocked, call);
}

class SignalWhileHeld
    : public ::testing::TestWithParam<std::tuple<Call, bool, InjectStep>> {};

TEST_P(SignalWhileHeld, HasTheEffectItHasOnAStoppedThread) {
  auto [call, sa_restart, step] = GetParam();
  auto expected = oracle(call, sa_restart);
  ASSERT_TRUE(expected.has_value());

  auto blocked = start_blocked(call, sa_restart);
  ASSERT_TRUE(blocked.has_value());
  // The injector paused right after `step`, holding the thread: seized
  // only (the signal then finds it in a signal-delivery-stop), stopped,
  // stopped at its call's entry (for a call that restarts), or committed
  // (the stub's registers). Then the signal, then the injector dies, and
  // the thread goes on without it.
  auto injector = Injector::start(
      tool_argv(blocked->process.pid(), blocked->tid, false),
      {"UBTRACE_TEST_INJECT_STOP=" + std::to_string(int(step)) + ":pause"},
      false);
  ASSERT_TRUE(injector.wait_stopped()) << injector.output();
  ::kill(blocked->process.pid(), SIGUSR1);
  injector.kill();
  ASSERT_TRUE(injector.wait().has_value());
  auto line = outcome(*blocked, call);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line, *expected);
  std::cout << "[          ] " << *line << "\n";
}

std::string call_name(const Call &call) {
  return call.name;
}

// "after_committed": test names take letters, digits and '_' only.
std::string step_label(InjectStep step) {
  std::string name = "after_" + std::string(inject_step_name(step));
  for (char &c : name)
    if (c == '-')
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Inject, BlockedCall,
                         ::testing::Combine(::testing::ValuesIn(kCalls),
                                            ::testing::Bool()),
                         [](const auto &info) {
                           return call_name(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_Interrupted"
                                                           : "_NewThread");
                         });

INSTANTIATE_TEST_SUITE_P(
    Inject, SignalWhileHeld,
    ::testing::Combine(::testing::ValuesIn(kCalls), ::testing::Bool(),
                       ::testing::Values(InjectStep::Seized,
                                         InjectStep::Stopped,
                                         InjectStep::Chosen,
                                         InjectStep::Committed)),
    [](const auto &info) {
      return call_name(std::get<0>(info.param)) +
             (std::get<1>(info.param) ? "_SaRestart_" : "_NoSaRestart_") +
             step_label(std::get<2>(info.param));
    });

} // namespace
} // namespace ubtrace::test
