#include "runtime/inject/exit_status.h"

#include <cstring>
#include <sys/wait.h>

namespace ubtrace::runtime::inject {

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus result;
  if (WIFSIGNALED(status)) {
    result.kind = Kind::Signaled;
    result.code = WTERMSIG(status);
    result.core_dumped = WCOREDUMP(status);
  } else {
    result.kind = Kind::Exited;
    result.code = WEXITSTATUS(status);
  }
  return result;
}

std::string ExitStatus::describe() const {
  switch (kind) {
  case Kind::Exited:
    return "exited with code " + std::to_string(code);
  case Kind::Signaled: {
    const char *abbrev = sigabbrev_np(code);
    std::string text = "killed by signal " + std::to_string(code);
    if (abbrev)
      text += std::string(" (SIG") + abbrev + ")";
    if (core_dumped)
      text += ", core dumped";
    return text;
  }
  }
  return {};
}

int ExitStatus::shell_code() const {
  switch (kind) {
  case Kind::Exited:
    return code;
  case Kind::Signaled:
    return 128 + code;
  }
  return 0;
}

} // namespace ubtrace::runtime::inject
