// Shared by the channel fault tests: the build's ubtrace, agent and hostile
// programs, and child processes with their output on pipes.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::faults {

using namespace std::chrono_literals;

std::string build_path(const std::string &relative); // under UBTRACE_BUILD_DIR
std::string ubtrace_binary();
std::string agent_preload(); // libubtrace_preload.so
std::string fault_prog(const std::string &name);

// A child with stdin, stdout and stderr on pipes; killed (SIGKILL) and
// reaped by the destructor if still running.
class Child {
public:
  // `env` entries are added to this process's environment; `keep_fd` >= 0
  // stays open (not close-on-exec) in the child, at the same number.
  static Child start(const std::vector<std::string> &argv,
                     const std::vector<std::string> &env = {},
                     int keep_fd = -1);
  ~Child();
  Child(Child &&other) noexcept;
  Child &operator=(Child &&) = delete;

  pid_t pid() const { return pid_; }
  enum Stream { Stdout, Stderr };
  // The next line (without its newline); nullopt at EOF or timeout.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = 20s,
                                       Stream from = Stdout);
  // Reads lines until one starts with `prefix`.
  std::optional<std::string>
  wait_for_line(const std::string &prefix,
                std::chrono::milliseconds timeout = 20s, Stream from = Stdout);
  void write_stdin(const std::string &text);
  void close_stdin();
  void signal(int sig);
  // The wait status; nullopt after `timeout` (the child keeps running).
  std::optional<int> wait_exit(std::chrono::milliseconds timeout = 60s);
  // Everything read from stdout so far and what remains up to EOF (call
  // after wait_exit), and all of stderr.
  std::string all_stdout();
  std::string all_stderr();

private:
  Child() = default;
  void pump(int timeout_ms); // moves available output into the buffers
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string out_buf_, err_buf_, seen_out_, seen_err_;
  bool reaped_ = false;
  int status_ = 0;
};

// "exited N" / "killed by signal N" for a wait status.
std::string describe_status(int status);

} // namespace ubtrace::faults
