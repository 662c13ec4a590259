// What /proc/PID/stat and /proc/PID/status say of a process: the stat
// fields after the name (which may hold spaces and parentheses: it ends at
// the last ')'), and its seccomp filters. Read with read(2) (file_text.h):
// the process may exit meanwhile. Header only.
#pragma once

#include "runtime/file_text.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace {

struct ProcStat {
  char state = '?';
  pid_t ppid = 0;                    // field 4
  unsigned long long start_time = 0; // field 22, clock ticks since boot
  int exit_code = 0;                 // field 52, a wait status
};

inline std::optional<ProcStat> read_proc_stat(pid_t pid) {
  auto read = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!read)
    return std::nullopt;
  const std::string &text = *read;
  size_t close = text.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> fields; // fields[0] is field 3 (the state)
  for (std::string word; rest >> word;)
    fields.push_back(word);
  if (fields.size() < 20 || fields[0].empty())
    return std::nullopt;
  ProcStat s;
  s.state = fields[0][0];
  s.ppid = static_cast<pid_t>(std::stol(fields[1]));
  s.start_time = std::stoull(fields[19]);
  if (fields.size() >= 50)
    s.exit_code = std::stoi(fields[49]);
  return s;
}

} // namespace ubtrace

namespace ubtrace {

// How many seccomp filters a process ("self" or a pid) runs under, from
// /proc/PID/status: "Seccomp_filters:" (Linux 5.9 on); without that line
// 0 when "Seccomp:" says none. -1 when it cannot be told. Filters only
// stack up, so a descendant of a process with as many runs under the same
// ones (--follow compares an exec'd program's with the CLI's).
inline int seccomp_filters(const std::string &pid) {
  auto read = read_file("/proc/" + pid + "/status");
  if (!read)
    return -1;
  auto field = [&](const char *name) -> long {
    size_t at = read->find(std::string("\n") + name);
    if (at == std::string::npos)
      return -1;
    at += 1 + std::strlen(name);
    while (at < read->size() && ((*read)[at] == ' ' || (*read)[at] == '\t'))
      ++at;
    char *end = nullptr;
    long v = std::strtol(read->c_str() + at, &end, 10);
    return end == read->c_str() + at ? -1 : v;
  };
  long filters = field("Seccomp_filters:");
  if (filters >= 0)
    return static_cast<int>(filters);
  return field("Seccomp:") == 0 ? 0 : -1;
}

// A process under `filters` (seccomp_filters()) runs in a sandbox the CLI,
// under `cli_filters`, is not in: one it made itself (or cannot be told,
// -1). Its filter may kill the agent for the socket() it connects back
// with, so the agent is not loaded there (system-wide) or stays quiet
// (--follow).
inline bool sandboxed_apart(int filters, int cli_filters) {
  return filters != 0 && (filters < 0 || filters != cli_filters);
}

} // namespace ubtrace
