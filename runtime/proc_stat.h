// What /proc/PID/stat says of a process: the fields after the name (which
// may hold spaces and parentheses: it ends at the last ')'). Read with
// read(2) (file_text.h): the process may exit meanwhile. Header only.
#pragma once

#include "runtime/file_text.h"

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
