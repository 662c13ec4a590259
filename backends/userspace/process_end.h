// How a traced process ended, as far as ubtrace can know, and the sentence
// that says so at the end of the trace.
//
// A command ubtrace started (-c) is its child: waiting for it gives its
// status. A process it attached to (-p) is someone else's child, and two
// facts from outside tell that it ended: kill(pid, 0) is no such fact (it
// succeeds on a zombie whose parent never reaps it, and on whatever process
// reuses the pid), so ProcessWatch holds a pidfd, readable once the whole
// thread group has exited, zombie or reaped. How it ended is read from the
// zombie's /proc/PID/stat (exit_code, the wait status, visible to a tracer
// allowed to ptrace it), checked against the start time recorded at attach
// so a reused pid is never read; once its parent has reaped it, how it
// ended is lost, and the sentence says so.
//
// Decision (man/ubtrace.8, EXIT STATUS): ubtrace's exit status never
// passes on the target's, as with bpftrace. Instead a target killed by a
// signal (-c and -p) and any end of a -p target are reported on stderr
// (text) or as a "process_exit" record (-f json).
#pragma once

#include "backends/output/output.h"
#include "runtime/inject/exit_status.h"
#include "runtime/inject/unique_fd.h"

#include <optional>
#include <string>
#include <sys/types.h>

namespace ubtrace::backends {

struct ProcessEnd {
  pid_t pid = 0;
  std::string comm; // its name (/proc/PID/comm) while it ran
  // nullopt: its parent collected the status before ubtrace could read it.
  std::optional<runtime::inject::ExitStatus> status;
};

// "Process 123 (segv) was killed by signal 11 (SIGSEGV), core dumped",
// "Process 123 (app) exited with code 3", or for an unknown status
// "Process 123 (app) ended (its parent collected its exit status first)".
std::string describe(const ProcessEnd &end);

// What the trace says of the end: a death by a signal (-c and -p), any end
// of a process attached to (`attached`, -p); nothing for a command that
// exited, nor for one that a Ctrl-C (SIGINT, SIGTERM, SIGHUP) stopping the
// trace too (`stopping`) killed along with ubtrace (a terminal signals
// the whole process group).
std::optional<output::ProcessExit> exit_record(const ProcessEnd &end,
                                               bool attached, bool stopping);

// The warning for an agent that hung up while its process lives on.
// `reason`: UserspaceTarget::hangup_reason(), "" if unknown.
std::string agent_gone_text(pid_t pid, const std::string &comm,
                            const std::string &reason, bool ends_trace);

// The name of a running process ("" when unreadable).
std::string process_comm(pid_t pid);

// A process ubtrace did not start, watched until it ends.
class ProcessWatch {
public:
  // Records its start time and name and opens a pidfd (without one, on old
  // kernels, poll() reads /proc/PID/stat instead).
  static ProcessWatch open(pid_t pid);

  // The end, once the process has ended; nullopt while it runs. Does not
  // block.
  std::optional<ProcessEnd> poll();
  // Readable once the process has ended (-1 without a pidfd).
  int fd() const { return pidfd_.get(); }

private:
  pid_t pid_ = 0;
  std::string comm_;
  unsigned long long start_time_ = 0; // /proc/PID/stat field 22
  runtime::inject::UniqueFd pidfd_;
  std::optional<ProcessEnd> end_;
};

} // namespace ubtrace::backends
