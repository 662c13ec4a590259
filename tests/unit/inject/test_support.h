// Helpers for the inject tests: starting target programs with pipes on
// their stdin/stdout, reading their output line by line, waiting for
// conditions with a deadline.
#pragma once

#include "runtime/inject/injector.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace ubtrace::test {

using namespace std::chrono_literals;

// The test-name suffix of a loader mode, for INSTANTIATE_TEST_SUITE_P:
// "NewThread", "InterruptedThread".
struct LoaderName {
  template <class Info> std::string operator()(const Info &info) const {
    return info.param == runtime::inject::LoaderThread::New
               ? "NewThread"
               : "InterruptedThread";
  }
};

std::string prog_path(const std::string &name);
std::string test_agent_path();
std::string other_library_path();
// A fresh path in the temporary directory (the file does not exist).
std::string temp_path(const std::string &stem);
std::string read_file(const std::string &path);
std::vector<std::string> read_lines(const std::string &path);

bool wait_until(const std::function<bool()> &condition,
                std::chrono::milliseconds timeout = 10s);
// The system call thread `tid` of `pid` is blocked in (/proc/.../syscall),
// -1 when it runs user code, nullopt if unknown.
std::optional<long> blocked_syscall(pid_t pid, pid_t tid);
std::vector<pid_t> thread_ids(pid_t pid);
// Each thread's state, pending, blocked and caught signals, tracer and
// system call, from /proc: for a test's failure message.
std::string signal_state(pid_t pid);

class TestProcess {
public:
  // Starts argv[0] (a path) with stdin/stdout on pipes; stderr is
  // inherited. `env` entries are added to this process's environment;
  // each {parent fd, child fd} of `fds` is passed on as that child fd.
  static TestProcess start(const std::vector<std::string> &argv,
                           const std::vector<std::string> &env = {},
                           const std::vector<std::pair<int, int>> &fds = {});

  pid_t pid() const { return pid_; }
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = 10s);
  // Reads lines until one starts with `prefix`.
  std::optional<std::string>
  wait_for_line(std::string_view prefix,
                std::chrono::milliseconds timeout = 10s);
  // Every line up to EOF.
  std::vector<std::string>
  read_remaining(std::chrono::milliseconds timeout = 10s);
  void write_stdin(std::string_view text);
  void close_stdin();
  void signal(int sig);
  // The raw wait status; nullopt on timeout or if the process was reaped
  // elsewhere (a tracer that is also the parent reaps on exit).
  std::optional<int> wait_exit(std::chrono::milliseconds timeout = 10s);
  // Waits until it is stopped by a signal; false if it ended (or timed
  // out) first.
  bool wait_stopped(std::chrono::milliseconds timeout = 10s);

  ~TestProcess();
  TestProcess(TestProcess &&other) noexcept;
  TestProcess &operator=(TestProcess &&) = delete;

private:
  TestProcess() = default;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
  bool eof_ = false;
  bool reaped_ = false;
};

} // namespace ubtrace::test
