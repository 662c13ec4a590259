#include "runtime/inject/attach_errors.h"

#include "runtime/inject/sys_error.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

std::optional<std::string> status_field(pid_t pid, const std::string &field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, field.size() + 1, field + ":") == 0) {
      size_t start = line.find_first_not_of(" \t", field.size() + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  return std::nullopt;
}

std::string scope_meaning(int scope) {
  switch (scope) {
  case 0:
    return "any process of the same user";
  case 1:
    return "only descendants, unless CAP_SYS_PTRACE";
  case 2:
    return "only with CAP_SYS_PTRACE";
  case 3:
    return "no attaching at all";
  default:
    return "unknown setting";
  }
}

bool has_cap_sys_ptrace() {
  auto caps = status_field(::getpid(), "CapEff");
  if (!caps)
    return false;
  unsigned long long value = std::strtoull(caps->c_str(), nullptr, 16);
  return (value >> 19) & 1; // CAP_SYS_PTRACE
}

} // namespace

std::optional<int> yama_ptrace_scope() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope;
  if (!(in >> scope))
    return std::nullopt;
  return scope;
}

Result<pid_t> tracer_of(pid_t pid) {
  auto field = status_field(pid, "TracerPid");
  if (!field)
    return make_error("no such process: " + std::to_string(pid));
  return static_cast<pid_t>(std::atoi(field->c_str()));
}

Result<char> process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text))
    return make_error("no such process: " + std::to_string(pid));
  // "pid (comm) S ...": comm may hold spaces and parentheses.
  size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size())
    return make_error("cannot parse /proc/" + std::to_string(pid) + "/stat");
  return text[close + 2];
}

std::string explain_attach_failure(pid_t pid, int err) {
  std::string head = "cannot attach to " + std::to_string(pid) + ": ";
  if (err == ESRCH)
    return head + "no such process";
  if (err != EPERM && err != EACCES)
    return head + std::strerror(err);

  std::string why;
  auto add = [&why](const std::string &fact) {
    why += why.empty() ? fact : "; " + fact;
  };
  if (auto tracer = tracer_of(pid); tracer && *tracer != 0)
    add("it is already traced by process " + std::to_string(*tracer) +
        " (a debugger or another tracer)");
  if (auto scope = yama_ptrace_scope())
    add("ptrace_scope=" + std::to_string(*scope) + ": " +
        scope_meaning(*scope));
  else
    add("no Yama ptrace_scope on this kernel");
  if (auto uid = status_field(pid, "Uid")) {
    unsigned target_uid = static_cast<unsigned>(std::atoi(uid->c_str()));
    if (target_uid != ::geteuid())
      add("the process runs as uid " + std::to_string(target_uid) +
          ", you are uid " + std::to_string(::geteuid()) +
          " (not the same user)");
    struct stat st;
    std::string dir = "/proc/" + std::to_string(pid);
    // A non-dumpable process's /proc files belong to root.
    if (::stat(dir.c_str(), &st) == 0 && st.st_uid != target_uid)
      add("the process is not dumpable (setuid, or PR_SET_DUMPABLE 0)");
  }
  add(has_cap_sys_ptrace() ? "you have CAP_SYS_PTRACE"
                           : "you are not root (no CAP_SYS_PTRACE)");
  return head + "permission denied (" + why + ")";
}

} // namespace ubtrace::runtime::inject
