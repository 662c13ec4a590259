// The traced program of the session tests: a real child process with its
// stdin and stdout on pipes, and what a tracer can see of it from outside
// (its memory, its open descriptors, its mappings).
#pragma once

#include "runtime/result.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::session_test {

class TargetProcess {
public:
  // Starts argv[0] (a path); stderr is inherited.
  static Result<TargetProcess> start(const std::vector<std::string> &argv);
  ~TargetProcess();
  TargetProcess(TargetProcess &&other) noexcept;
  TargetProcess &operator=(TargetProcess &&) = delete;

  pid_t pid() const { return pid_; }
  // The next line of its stdout; nullopt at end of file or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Every remaining line, up to end of file (or `timeout`).
  std::vector<std::string> read_remaining(std::chrono::milliseconds timeout);
  void close_stdin();
  // Still running (not exited, not a zombie waiting for us)?
  bool running();
  // "running", "exited N" or "killed by signal N (NAME)". After a failure:
  // a process being killed has closed its files (a channel reads as reset)
  // a moment before it can be waited for, so this waits up to `settle`.
  std::string
  state(std::chrono::milliseconds settle = std::chrono::milliseconds(2000));
  // The raw wait status once it exits; nullopt after `timeout`.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);

  // `size` bytes of its memory at `address` (/proc/PID/mem).
  Result<std::vector<uint8_t>> read_memory(uint64_t address, size_t size) const;
  // Entries of /proc/PID/fd and lines of /proc/PID/maps.
  size_t open_descriptors() const;
  size_t mappings() const;

private:
  TargetProcess() = default;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
  bool eof_ = false;
  std::optional<int> status_;
};

// Descriptors this process has open.
size_t own_descriptors();

} // namespace ubtrace::session_test
