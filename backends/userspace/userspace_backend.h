// The user-space backend (backend.h): runs a bundle's uprobe, uretprobe
// and usdt probes in the traced processes (-c CMD, or -p PID[,PID...])
// through the agent inside each (target.h), and keeps the printer's view
// of their address spaces current (user_symbols.h), so their addresses
// print as symbols, even after they exit.
//
// A trace with -c or -p has one whether or not it has user-space probes:
// the processes are what the trace waits for. Each is attached, serviced
// and detached on its own: one that cannot be traced is reported and the
// others go on; the trace ends when the last one is done (ended, or with
// -p its agent hung up).
//
// -c: the command's own execs are traced (as bpftrace's -c traces its pid
// whatever it runs); with --follow, the whole tree's. Each program so
// exec'd connects back from its preload (runtime/agent/protocol.h) and
// waits before main; service() takes it on as one more process (a
// follower: quiet, its hooks in before it runs, retired once it ends or
// execs again). The command alone holds the trace, as without --follow.
//
// Neither -c nor -p: system-wide. Every process that maps a file one of
// the probes is on is injected, those running at the start and those that
// come later (system_wide.h finds them); each is quiet, as a follower, and
// retired once it ends or execs (the program it exec'd is looked at anew).
// The trace runs until exit() or Ctrl-C, with or without processes.
// System-wide, profile, software/hardware event and system call probes
// run from the CLI on the kernel's records of every CPU
// (system_sampler.h).
#pragma once

#include "backends/backend.h"
#include "backends/program_set.h"
#include "backends/reporter.h"
#include "backends/user_symbols.h"
#include "backends/userspace/system_sampler.h"
#include "backends/userspace/system_wide.h"
#include "backends/userspace/target.h"
#include "runtime/abi.h"
#include "runtime/inject/channel.h"
#include "runtime/inject/exec_hold.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ubtrace::backends {

struct UserspaceBackendOptions {
  std::string command;   // -c: run and trace it
  std::vector<int> pids; // -p: trace them
  // --follow: every program the command's tree execs is traced too (its
  // agent connects back; runtime/agent/protocol.h).
  bool follow = false;
  // Neither -c nor -p, and user-space probes: every process that maps
  // their files (system_wide.h).
  bool system_wide = false;
  int verbose = 0; // -v: an INFO line for each site hooked
  // Prints what the probes the CLI runs itself write, and says when one
  // of them called exit(): system-wide samples (system_sampler.h), the
  // -c command's own execve (command_exec.h). Needed when system-wide.
  BackendHost *host = nullptr;
};

// What happened to one traced process, for the session to say.
struct TargetNews {
  enum class Kind { AgentGone, Ended } kind;
  pid_t pid = 0;
  std::string comm;
  std::string reason;            // AgentGone: hangup_reason()
  std::optional<ProcessEnd> end; // Ended
  bool last = false;             // no traced process is left after it
};

class UserspaceBackend final : public Backend {
public:
  // User-space probes need a process to trace (-c or -p). Without one,
  // the probes on binaries named by path are checked first (a missing
  // function, an offset or address that cannot be probed), as bpftrace
  // reports those before anything runs.
  static Result<void> check(const runtime::Bundle &bundle,
                            const UserspaceBackendOptions &options);
  // Starts the command (it waits before main until start()) or injects the
  // agent into each process. A process that cannot be traced is an error
  // when it is the only one; among several its reason is reported and the
  // others go on. `globals` (may be null) gets the command's pid (cpid)
  // and the uaddr() addresses; `probe_names` the names of what wildcards
  // expand to.
  static Result<std::unique_ptr<UserspaceBackend>>
  create(const runtime::Bundle &bundle, const ProgramSet &programs,
         runtime::maps::Region &region, abi::Globals *globals,
         std::vector<std::string> &probe_names, UserSymbols &symbols,
         Reporter &report, const UserspaceBackendOptions &options);

  BackendKind kind() const override { return BackendKind::Userspace; }
  // Hooks the probes in each process; those waiting for a library count
  // as attached, as kernel uprobes on a file do. Probes are counted once
  // however many processes run them (the most any one process hooked),
  // as bpftrace counts a uprobe on a file once.
  Result<size_t> attach() override;
  // Lets a command run (-p: nothing).
  Result<void> start() override;
  // Every 5 ms: a thread waiting in dlopen for its library's hooks waits
  // little. System-wide with the process events, every millisecond, when
  // only the events are read between those: a new program is held
  // sooner (exec_hold.h).
  uint64_t service_period_ns() const override {
    return scout_ && scout_->told_at_exec() ? kEventsPeriodNs
                                            : kServicePeriodNs;
  }
  // Libraries the processes loaded get their probes hooked.
  Result<void> service() override;
  bool fires_later() const override { return true; }
  // Unhooks: the processes run on untraced.
  void detach() override;
  // Every process's counters, one after another (followers retired
  // included), and --follow's own.
  agent::NamedValues losses() const override;

  // The first traced process (-c: the command). Not system-wide.
  int pid() const { return targets_.front().target->pid(); }
  // What happened to the processes since the last call (non-blocking; the
  // session's loop): agents that hung up while their process lives on,
  // processes that ended. A process is done once it ended, or (-p) once
  // its agent is gone; the event that leaves none is marked `last`.
  std::vector<TargetNews> news();
  // Every traced process is done.
  bool done() const;
  // Hands the agent the GPU channel (gpu::GpuBackend's attach()): one
  // traced process only.
  Result<void> pass_gpu_channel(int fd) {
    return targets_.front().target->pass_gpu_channel(fd);
  }

private:
  UserspaceBackend(const runtime::Bundle &bundle, const ProgramSet &programs,
                   runtime::maps::Region &region, abi::Globals *globals,
                   std::vector<std::string> &probe_names, UserSymbols &symbols,
                   Reporter &report)
      : bundle_(bundle), programs_(programs), region_(region),
        globals_(globals), probe_names_(probe_names), symbols_(symbols),
        report_(report) {}

  struct Traced {
    std::unique_ptr<UserspaceTarget> target;
    uint64_t symbols_refreshed_ns = 0;
    bool ended = false;
    bool gone_said = false;
    bool done = false;
    bool follower = false;  // --follow: connected on its own
    bool scouted = false;   // system-wide: found and injected
    uint64_t taken_ns = 0;  // system-wide: when
    bool succeeded = false; // its process exec'd, and the new program
                            // connected (--follow)
    uint64_t gone_ns = 0;   // when its hangup was first seen
    // -p: the process exec'd; service() injects its new program.
    bool reattach = false;
    std::string reattach_error = {}; // why its new program is not traced
  };
  // --follow: programs of the tree that connected since the last call
  // and sent their token, taken on (hooked, then let run). Never blocks:
  // a connection that has not spoken waits in pending_ for a second.
  void take_followers();
  void adopt_follower(pid_t pid, runtime::inject::AgentChannel channel);
  // -p: a process that exec'd is traced on in the program it became (as
  // bpftrace's pid filter goes on matching it): injected again, once its
  // loader has mapped glibc; one that cannot be (static, setuid) is said
  // and done.
  void reattach_execs();
  // System-wide: processes that map a probed file and are not traced yet
  // are injected and hooked; one that cannot be is counted once (until it
  // execs) and said with -v.
  void take_newcomers();
  // `image`: the process's start time and program, hashed: a process
  // refused (or inherited) is looked at again once it exec'd.
  // `hold`: the process held from its exec (exec_hold.h), let go once its
  // hooks are in (or it is refused).
  void take_on(pid_t pid, uint64_t image,
               std::optional<runtime::inject::ExecHold> hold = std::nullopt);
  void refuse(pid_t pid, uint64_t image, const std::string &why);
  // Hooks a process taken on (adopted or injected) and lets it run; its
  // error says why it is not traced.
  Result<size_t> hook_newcomer(UserspaceTarget &t);
  // A newcomer hooked: kept as a follower (--follow) or a scouted process
  // (system-wide), and said with -v.
  void keep_newcomer(std::unique_ptr<UserspaceTarget> t, size_t hooked,
                     bool follower);
  // The uaddr() values, from the first process that could give them.
  void publish_addresses(const std::vector<uint64_t> &values);
  struct Pending {
    runtime::inject::AgentChannel channel;
    pid_t pid = 0;
    uint64_t since_ns = 0;
  };
  // A target whose agent hung up (an exec, or its descriptors closed), and
  // no program connected in its place within a second or before its
  // process ended (--follow): what it became runs untraced.
  bool exec_unfollowed(Traced &t, uint64_t now);
  void configure(UserspaceTarget &t);
  // A process's mappings for printing its addresses: looked at again
  // when it reported a library, and every second (libraries it loaded
  // without a probe waiting for them), while it lives.
  void refresh_symbols(Traced &t, bool now);
  // "process 123 (app): " before a reason, when there are several.
  std::string who(const Traced &t) const;

  const runtime::Bundle &bundle_;
  const ProgramSet &programs_;
  runtime::maps::Region &region_;
  abi::Globals *globals_;
  std::vector<std::string> &probe_names_;
  UserSymbols &symbols_;
  Reporter &report_;
  std::vector<Traced> targets_;
  // Each file's symbols, read once for all the processes.
  std::shared_ptr<runtime::symbols::BinaryCache> binaries_ =
      std::make_shared<runtime::symbols::BinaryCache>();
  // The probes' native code, compiled once per address of the maps.
  std::shared_ptr<NativeCodeCache> native_code_ = make_native_code_cache();
  bool attached_ = false; // -p rather than -c
  BackendHost *host_ = nullptr;
  int verbose_ = 0;
  // --follow
  std::string agent_;
  std::optional<runtime::inject::AgentListener> listener_;
  std::string token_;
  agent::NamedValues retired_; // counters of followers gone
  uint64_t follow_failed_ = 0; // connected, could not be traced
  uint64_t exec_lost_ = 0;     // exec'd a program that did not connect
  uint64_t agent_closed_ = 0;  // a follower closed its agent's channel
  uint64_t followed_ = 0;      // programs taken on (said with -v)
  int seccomp_filters_ = 0;    // the CLI's (runtime/proc_stat.h)
  std::vector<Pending> pending_;
  std::set<std::string> said_; // followers' warnings, each said once
  // System-wide
  bool system_wide_ = false;
  std::optional<ProcessScout> scout_;      // probes on files
  std::unique_ptr<SystemSampler> sampler_; // profile and perf events
  size_t probes_ = 0;                      // the probes on files, counted once
  // Processes passed over (not traceable, not readable, or a traced
  // process's fork): their image (take_on) and when.
  struct PassedOver {
    uint64_t image = 0;
    uint64_t at_ns = 0;
  };
  std::map<pid_t, PassedOver> refused_;
  uint64_t system_skipped_ = 0;    // processes that could not be traced
  uint64_t system_unreadable_ = 0; // processes whose maps were unreadable
  uint64_t system_traced_ = 0;     // processes taken on (said with -v)
  uint64_t last_service_ns_ = 0;   // the last whole service()
  static constexpr uint64_t kServicePeriodNs = 5000000;
  static constexpr uint64_t kEventsPeriodNs = 1000000;
  static constexpr size_t kMostWaiting = 8; // programs stopped in line
  // How long a held program may run on to a call where it can be lent
  // (most make one within microseconds of their loader; one that computes
  // first is let go and injected as it runs).
  static constexpr std::chrono::milliseconds kSafeEntryBudget{50};
  uint64_t system_held_ = 0;   // of those traced, held from their exec
  bool addresses_set_ = false; // uaddr() values published
};

} // namespace ubtrace::backends
