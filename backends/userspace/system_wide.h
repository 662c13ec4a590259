// Which processes a system-wide trace takes on (no -c, no -p): every one
// that maps a file one of its user-space probes is on, as a kernel uprobe
// on a file fires in every process that runs it.
//
// Processes running when the trace starts are found by reading each
// /proc/PID/maps. Later ones are learnt from the kernel's process events
// (runtime/inject/proc_events.h: root, initial namespaces) the moment they
// exec; a program's libraries are mapped a little after its exec (the
// loader maps them), so a newcomer is looked at again, at every service
// for 20 ms, then 1, 2, 4 ... ms apart, until its loader has mapped glibc
// or 200 ms have passed since its first look (not its exec: a CLI busy
// injecting another process still looks at it). /proc is read again
// every second whatever the events say: it catches what
// the events cannot tell (a library dlopen()ed long after the exec, events
// the kernel dropped). Where the events cannot be had (an ordinary user, a
// container), the files themselves are watched (inotify, IN_OPEN: an exec
// opens the program, the loader opens each library): an open is followed
// by rescans of /proc 0, 10, 50 and 200 ms later, since who opened is not
// told; a rescan already due within 10 ms of one of those times serves
// for it (a fork-exec loop costs at most a rescan per 10 ms). The user-space
// backend injects the agent into each process found (userspace_backend.h);
// a program whose exec the events told is held from its first system
// calls until its hooks are in (runtime/inject/exec_hold.h), when it may
// map a probed file: it is one, or one of them is a library.
#pragma once

#include "runtime/bundle.h"
#include "runtime/inject/proc_events.h"
#include "runtime/inject/unique_fd.h"
#include "runtime/result.h"
#include "runtime/symbols/file_identity.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::backends {

// The files the user-space probes of `bundle` are on, resolved without a
// process (paths, globs, library names through the loader's cache). An
// error names the probe whose file cannot be known that way ("*", or a
// name that resolves to nothing).
Result<std::vector<std::string>>
system_wide_files(const runtime::Bundle &bundle);

class ProcessScout {
public:
  // Watches for processes that map one of `files`. `region_fd`: the
  // trace's maps region, which a traced process's forked children map
  // too (they inherit the hooks: traced already).
  static Result<ProcessScout> create(const std::vector<std::string> &files,
                                     int region_fd);

  // What process `pid` maps now: one of the files, and glibc (its
  // loader has mapped the libraries: the injector needs glibc). An error
  // when its maps cannot be read (it ended, or it is not ours to read).
  struct Look {
    bool probed = false;
    bool glibc = false;
    bool inherited = false; // maps the region: a traced process's fork
  };
  Result<Look> look(pid_t pid) const;
  // When process `pid` exec'd, if that was told, its first look was at
  // most 200 ms ago, and it was not settled() since (its loader may still
  // be at work).
  std::optional<uint64_t> exec_seen(pid_t pid) const {
    auto it = recent_.find(pid);
    return it == recent_.end() ? std::nullopt
                               : std::optional(it->second.exec_ns);
  }

  // Processes worth a look now, each once per call: every process when
  // a rescan is due (or on the first call), else those that exec'd lately
  // whose next look is due. Never this one.
  std::vector<pid_t> due(uint64_t now_ns);
  // Reads the process events queued now (due() does so first): a process
  // that a rescan lists may exec between that read and its look, and
  // is known to have once this read it.
  void read_events(uint64_t now_ns);
  // Whether process `pid`'s exec was told by the process events and this
  // is the first time it is asked (true once per exec): it may be held.
  bool fresh_exec(pid_t pid);
  // Whether the program process `pid` runs may map a probed file: it is
  // one, or a probed file is a library (whether the program needs it is
  // known once its loader is done).
  bool may_map(pid_t pid) const;

  // A newcomer taken on, or whose loader is done without mapping a probed
  // file: no more looks until it execs again (or a rescan).
  void settled(pid_t pid);
  // Whether each exec is told as it happens (the process events).
  bool told_at_exec() const { return events_.has_value(); }
  // How new processes are learnt: "process events", or "opens of the
  // files (process events: WHY)".
  const std::string &how() const { return how_; }

private:
  std::vector<runtime::symbols::FileIdentity> files_;
  std::optional<runtime::symbols::FileIdentity> region_;
  std::vector<std::string> paths_;
  bool library_probed_ = false; // a probed file is a shared library
  std::optional<runtime::inject::ProcEvents> events_;
  runtime::inject::UniqueFd opens_; // inotify, without events_
  std::vector<uint64_t> rescans_;   // when opens ask for one
  std::string how_;
  uint64_t last_rescan_ns_ = 0;
  bool rescan_now_ = true;
  uint64_t overruns_seen_ = 0;
  struct Newcomer {
    uint64_t exec_ns = 0;   // when it exec'd (the kernel's time)
    uint64_t looked_ns = 0; // its first look (0: none yet)
    uint64_t next_ns = 0;   // its next look
    uint64_t step_ns = 0;   // after that one, doubled each time
    bool asked = false;     // fresh_exec() said true
  };
  std::map<pid_t, Newcomer> recent_; // exec'd lately
};

} // namespace ubtrace::backends
