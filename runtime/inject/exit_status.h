// How a process ended, from a wait status.
#pragma once

#include <string>

namespace ubtrace::runtime::inject {

struct ExitStatus {
  enum class Kind { Exited, Signaled };
  Kind kind = Kind::Exited;
  int code = 0; // the exit code (Exited) or the signal number (Signaled)
  bool core_dumped = false;

  static ExitStatus from_wait_status(int status);
  // "exited with code 3", "killed by signal 9 (SIGKILL)".
  std::string describe() const;
  // What a shell would report as $?: the code, or 128 + signal.
  int shell_code() const;
};

} // namespace ubtrace::runtime::inject
