#include "backends/userspace/process_end.h"

#include "runtime/file_text.h"
#include "runtime/proc_stat.h"

#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <sstream>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::backends {
namespace {

// A zombie whose threads are all gone (a leader that left with
// pthread_exit shows 'Z' while the others run).
bool whole_process_dead(pid_t pid, const ProcStat &s) {
  if (s.state != 'Z' && s.state != 'X')
    return false;
  DIR *d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!d)
    return true;
  int tasks = 0;
  while (struct dirent *e = readdir(d))
    if (e->d_name[0] != '.')
      ++tasks;
  closedir(d);
  return tasks <= 1;
}

} // namespace

std::string describe(const ProcessEnd &end) {
  std::string who = "Process " + std::to_string(end.pid);
  if (!end.comm.empty())
    who += " (" + end.comm + ")";
  if (!end.status)
    return who + " ended (its parent collected its exit status first)";
  if (end.status->kind == runtime::inject::ExitStatus::Kind::Signaled)
    return who + " was " + end.status->describe();
  return who + " " + end.status->describe();
}

std::optional<output::ProcessExit> exit_record(const ProcessEnd &end,
                                               bool attached, bool stopping) {
  using Kind = runtime::inject::ExitStatus::Kind;
  const auto &st = end.status;
  bool killed = st && st->kind == Kind::Signaled;
  bool stopped =
      killed && stopping &&
      (st->code == SIGINT || st->code == SIGTERM || st->code == SIGHUP);
  if ((!killed || stopped) && !attached)
    return std::nullopt;
  output::ProcessExit e;
  e.pid = end.pid;
  e.comm = end.comm;
  e.message = describe(end);
  if (st && st->kind == Kind::Exited)
    e.exit_code = st->code;
  if (killed) {
    e.signal = st->code;
    e.core_dumped = st->core_dumped;
  }
  return e;
}

std::string agent_gone_text(pid_t pid, const std::string &comm,
                            const std::string &reason, bool ends_trace) {
  std::string who = "process " + std::to_string(pid);
  if (!comm.empty())
    who += " (" + comm + ")";
  return "the agent in " + who + " hung up: its probes no longer fire (" +
         (reason.empty() ? "the process exec'd another program or closed "
                           "the agent's descriptors"
                         : reason) +
         ")" + (ends_trace ? "; the trace ends" : "");
}

std::string process_comm(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(f, name);
  return name;
}

ProcessWatch ProcessWatch::open(pid_t pid) {
  ProcessWatch w;
  w.pid_ = pid;
  w.comm_ = process_comm(pid);
  if (auto s = read_proc_stat(pid))
    w.start_time_ = s->start_time;
  w.pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  return w;
}

std::optional<ProcessEnd> ProcessWatch::poll() {
  if (end_)
    return end_;
  if (pidfd_.valid()) {
    struct pollfd p = {pidfd_.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0)
      return std::nullopt;
  }
  // Read after the pidfd said so: the exit code is set by then.
  auto stat = read_proc_stat(pid_);
  bool same = stat && stat->start_time == start_time_;
  if (!pidfd_.valid() && same && !whole_process_dead(pid_, *stat))
    return std::nullopt;
  ProcessEnd end{pid_, comm_, std::nullopt};
  // Still a zombie (nobody reaped it yet): its wait status is readable.
  if (same && (stat->state == 'Z' || stat->state == 'X'))
    end.status = runtime::inject::ExitStatus::from_wait_status(stat->exit_code);
  end_ = end;
  return end_;
}

} // namespace ubtrace::backends
