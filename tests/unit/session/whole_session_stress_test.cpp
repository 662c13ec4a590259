// Whole `ubtrace -p PID` sessions, one after another, against a process
// whose 8 threads never stop calling the probed functions.
//
// Each cycle is backends::run_session on a bundle the real front end
// compiled, run in this process exactly as the CLI runs it: ptrace
// injection (the first cycle loads the agent library; later ones find it
// loaded and only call its entry), the agent channel, a fresh maps region,
// the probes compiled to native code for the target, the hooks (jumps, and
// int3 traps where a function is too short), exit() from a probe, detach,
// the agent's end of session (code and maps unmapped), the maps printed.
// A session costs a few hundred milliseconds on a loaded 2-core machine,
// so this test runs ten of them; agent_cycle_stress_test.cpp runs the
// thousands of hook/unhook cycles.
//
// UBT_STRESS_SESSIONS overrides the number of sessions (default 10).
#include "backends/session.h"
#include "tests/unit/jit/script_bundle.h"
#include "tests/unit/session/stress_target.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

namespace ubtrace::session_test {
namespace {

using namespace std::chrono_literals;

// "@name: N" lines of the text output.
std::map<std::string, uint64_t> scalar_values(const std::string &text) {
  std::map<std::string, uint64_t> values;
  static const std::regex line(R"(^(@[A-Za-z_0-9]+): (-?[0-9]+)$)");
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line))
      values[m[1]] = std::strtoull(m[2].str().c_str(), nullptr, 10);
  }
  return values;
}

struct Session {
  int code = -1;
  std::string out, err;
};

Session run_one(const runtime::Bundle &bundle, int pid) {
  std::ostringstream out, err;
  backends::SessionOptions so;
  so.out = &out;
  so.err = &err;
  so.quiet = true;
  so.verbose = 1; // a line per hooked site: jump or trap
  so.pids = {pid};
  Session s;
  s.code = backends::run_session(bundle, so);
  s.out = out.str();
  s.err = err.str();
  return s;
}

bool is_busy(const Session &s) {
  return s.code != 0 && s.err.find("is traced by another ubtrace already") !=
                            std::string::npos;
}

// What is wrong with a finished session ("" when nothing).
std::string check_session(const Session &s,
                          std::map<std::string, uint64_t> &totals) {
  auto context = "\n--- output ---\n" + s.out + "--- errors ---\n" + s.err;
  if (s.code != 0)
    return "exit code " + std::to_string(s.code) + context;
  if (s.out.find("guard:") != std::string::npos)
    return "the session ended by its guard: some probe stopped firing" +
           context;
  if (s.err.find("ERROR") != std::string::npos ||
      s.err.find("WARNING") != std::string::npos)
    return "the session reported a problem" + context;
  auto values = scalar_values(s.out);
  if (values.count("@bad_args"))
    return "a probe saw arguments other than the caller passed" + context;
  for (const auto &name : kStressCounts) {
    auto it = values.find(name);
    if (it == values.end() || it->second == 0)
      return name + " did not fire" + context;
    totals[name] += it->second;
  }
  // Both ways into a probe stay under stress: the 4-byte function cannot
  // take a jump, the others can.
  if (s.err.find(", a trap") == std::string::npos ||
      s.err.find(", a jump") == std::string::npos)
    return "expected sites hooked with a jump and with a trap" + context;
  return "";
}

TEST(SessionStress, WholeSessionsComeAndGoWhileEightThreadsCall) {
  setenv("UBTRACE_AGENT", agent_library().c_str(), 1);
  const int sessions = env_count("UBT_STRESS_SESSIONS", 10);
  ASSERT_GT(sessions, 0);
  auto bundle = jit::test::compile_script(stress_script());
  ASSERT_TRUE(bundle) << bundle.error();
  auto target = StressTarget::start();
  ASSERT_TRUE(target) << target.error();
  const size_t target_fds_before = target->process().open_descriptors();

  std::map<std::string, uint64_t> totals;
  size_t busy_retries = 0, own_fds_after_first = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < sessions; i++) {
    ASSERT_TRUE(target->process().running())
        << "before session " << i << ": the target "
        << target->process().state();
    Session s = run_one(*bundle, target->pid());
    // The agent ends a session on its own thread after the CLI hangs up:
    // a CLI that comes back at once may find it still there and is told
    // so. A refusal, not a failure: try again.
    for (int retry = 0; is_busy(s) && retry < 5000; retry++) {
      busy_retries++;
      std::this_thread::sleep_for(1ms);
      s = run_one(*bundle, target->pid());
    }
    ASSERT_EQ(check_session(s, totals), "")
        << "session " << i << " of " << sessions << "; the target "
        << target->process().state();
    ASSERT_EQ(target->code_changes(), "")
        << "after the detach of session " << i;
    if (i == 0)
      own_fds_after_first = own_descriptors();
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "%d whole sessions in %.1f s (%.1f per second), %zu busy retries\n",
      sessions, seconds, sessions / seconds, busy_retries);
  for (const auto &[name, total] : totals)
    std::printf("  %-13s %" PRIu64 " hits\n", name.c_str(), total);

  // Nothing left open by the sessions, on either side (the target's once
  // its agent thread has hung up on the last one).
  EXPECT_EQ(own_descriptors(), own_fds_after_first);
  target->expect_clean_end(target_fds_before);
}

} // namespace
} // namespace ubtrace::session_test
