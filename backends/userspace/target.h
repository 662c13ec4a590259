// The user-space backend: one traced process with the agent inside it.
// It starts the command (-c) or injects into the process (-p), hands the
// agent the maps region and the verified programs, turns every uprobe,
// uretprobe and usdt attach point into addresses in the process (runtime/
// symbols) and asks the agent to hook them.
#pragma once

#include "backends/program_set.h"
#include "backends/userspace/process_end.h"
#include "runtime/agent/named_values.h"
#include "runtime/bundle.h"
#include "runtime/maps/region.h"
#include "runtime/result.h"
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/binary_cache.h"
#include "runtime/symbols/probe_resolver.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::runtime::inject {
struct ExecCall;
} // namespace ubtrace::runtime::inject

namespace ubtrace::backends {

// The resolver's request for a user-space probe of the bundle (none for
// other kinds), without a process.
std::optional<runtime::symbols::AttachRequest>
attach_request(const runtime::ProbeSpec &spec);

// What an expansion of `spec` means for the trace: true to hook what it
// found, false to skip the probe (nothing matched and missing_probes is
// warn, with a line in `warnings`, or ignore), or the error that stops
// the trace (nothing matched under missing_probes = error: located at the
// attach point, in bpftrace's words; or the resolver's own error).
Result<bool> judge_expansion(
    const runtime::ProbeSpec &spec, const runtime::symbols::AttachRequest &req,
    const Result<std::vector<runtime::symbols::ResolvedProbe>> &got,
    const runtime::symbols::ProbeResolver &resolver,
    runtime::MissingProbes missing_probes, std::vector<std::string> &warnings);

// The probes' native code, compiled once for every process that maps the
// maps region at the same address (install() asks each agent for the
// address the first one got). Shared by the targets of one trace.
struct NativeCodeCache;
std::shared_ptr<NativeCodeCache> make_native_code_cache();

} // namespace ubtrace::backends
namespace ubtrace::runtime::inject {
class ExecHold;
class AgentListener;
} // namespace ubtrace::runtime::inject
namespace ubtrace::backends {

// A command whose initialisers close every descriptor before the agent's
// run (as daemons' libraries may) takes its agent's channel with them: its
// agent then connects to `listener` (the one UBTRACE_FOLLOW names) and
// sends `token`, and is taken on from there.
struct CommandRedial {
  runtime::inject::AgentListener *listener = nullptr;
  std::string token;
};

class UserspaceTarget {
public:
  // Spawns `command` with the agent preloaded (and `agent_env`, NAME=value
  // assignments for it); it waits before main until go(). With
  // `follow_loader`, the calls it makes before the agent runs are
  // followed (exec_call()'s loader).
  // `redial`: where its agent connects if the channel it inherits is gone.
  static Result<std::unique_ptr<UserspaceTarget>>
  launch(const std::string &command, const std::string &agent,
         const std::vector<std::string> &agent_env = {},
         bool follow_loader = false, const CommandRedial &redial = {});
  // Injects the agent into the running process `pid` (through the thread
  // `hold` holds, if given: runtime/inject/exec_hold.h).
  static Result<std::unique_ptr<UserspaceTarget>>
  attach(int pid, const std::string &agent,
         runtime::inject::ExecHold *hold = nullptr);
  // Takes on the agent of process `pid` that connected on its own (a
  // program of the command's tree under --follow, waiting before main
  // until go()): `sock` is its channel, owned from here; `watch` pins the
  // process (opened now when not given).
  static Result<std::unique_ptr<UserspaceTarget>>
  adopt(int pid, int sock, const std::string &agent,
        std::optional<ProcessWatch> watch = std::nullopt);
  ~UserspaceTarget();

  int pid() const { return pid_; }

  // Hooks every user-space probe of `bundle`. Concrete probes found by
  // wildcards get new ids appended to `probe_names` (the `probe` builtin
  // prints them). Probes that match nothing fail the install, or with
  // config missing_probes = warn|ignore are skipped (a line in `warnings`
  // for warn). Returns how many sites were hooked.
  Result<size_t> install(std::vector<std::string> &warnings,
                         const runtime::Bundle &bundle,
                         const ProgramSet &programs,
                         runtime::maps::Region &region,
                         std::vector<std::string> &probe_names);
  // -v: a line for every site hooked (address, jump or trap, native or
  // interpreted code).
  void set_verbose(std::function<void(const std::string &)> sink);
  // The other processes of the trace (-p A,B): a probe on one of their
  // programs is not said to miss this one.
  void set_siblings(std::vector<int> pids);
  // Where the files' symbols and notes are read once for every process of
  // the trace (before install(); without it the target has its own).
  void share_binaries(std::shared_ptr<runtime::symbols::BinaryCache> cache);
  void share_native_code(std::shared_ptr<NativeCodeCache> cache);
  // The trace follows execs (-c: the command's own, --follow: its whole
  // tree's): a probe on a file the process does not map is no news (a
  // program it execs may map it), and a hangup at an exec names the
  // program whose agent did not connect.
  void set_follow();
  // System-wide: profile, perf event and system call probes run in the
  // CLI for every process (system_sampler.h); install() leaves them out
  // here, or each would run twice for this process.
  void set_sampled_elsewhere();
  // Warnings that come up while the trace runs (a library loaded from
  // another file than the one a waiting probe is for).
  void set_warnings(std::function<void(const std::string &)> sink);
  // Where each uaddr() symbol is in the process (Bundle::uaddrs order).
  Result<std::vector<uint64_t>>
  symbol_addresses(const std::vector<runtime::UaddrSpec> &symbols) const;
  // Handles what the agent reported since the last call (libraries loaded:
  // their pending probes get hooked). Returns how many sites were hooked.
  Result<size_t> service();
  // Probes still waiting for their library to load.
  size_t pending() const;
  // The process loaded or unloaded libraries since the last call (known
  // from what the agent reported).
  bool libraries_changed();
  // Each snapshot of the process's mappings taken to hook a library it
  // loaded (the loading thread waits meanwhile: the library is there).
  void set_snapshot_sink(
      std::function<void(const runtime::symbols::AddressSpace &)> sink);
  // Why the probes run in the agent's interpreter instead of native code
  // ("" when they are native).
  const std::string &jit_error() const;
  // How an attached process found the agent when not at our path (a
  // container: "copied into /tmp/...", runtime/inject/agent_placement.h);
  // "" otherwise.
  const std::string &agent_placement() const { return placement_; }
  // Hands the agent the GPU channel (gpu::GpuBackend::agent_end()), before
  // go(): the only way it learns of a GPU peer.
  Result<void> pass_gpu_channel(int fd);
  // Lets a spawned command run (no-op for -p).
  Result<void> go();
  // A spawned command: the execve that started it (null for -p).
  const runtime::inject::ExecCall *exec_call() const;
  // The probe id a system call probe's event runs under (its own name, or
  // the event's when the probe names several), as the agent is told.
  uint64_t syscall_probe_id(size_t spec_index,
                            const runtime::SyscallSite &site);
  // The process's end, once it ended (non-blocking): a command's wait
  // status; for -p what its zombie still shows (process_end.h), a zombie
  // nobody reaps included.
  std::optional<ProcessEnd> ended();
  // The agent closed its channel (learnt by service(), or by ended()
  // before it reaps) and not because the process exited: it exec'd
  // another program or closed the agent's descriptors, as /proc told when
  // the hangup was seen, or it lives on half a second later. No probe
  // fires any more.
  bool agent_gone();
  // Why, as /proc told ("the process exec'd sh, which ubtrace does not
  // follow"); "" when it could not tell.
  const std::string &hangup_reason() const;
  // The hangup was an exec (not closed descriptors, nor untold).
  bool hung_up_by_exec() const;
  // The name the process had when the trace began.
  const std::string &comm() const;
  // The agent's loss counters of this session (runtime/agent/
  // agent_counters.h), as last read: service() asks every 250 ms, the
  // agent sends their last values as the process exits, and
  // collect_counters() asks once more at the end of a trace that outlives
  // neither. A process that dies of a signal leaves the last ones asked.
  const agent::NamedValues &agent_counters() const;
  void collect_counters();
  // Removes every hook; the process runs on untraced.
  void detach();

private:
  struct Impl;
  static void note_hangup(Impl &im);
  explicit UserspaceTarget(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int pid_ = 0;
  std::string placement_;
};

// Where the agent's preload library (libubtrace_preload.so, which loads the
// agent) is: $UBTRACE_AGENT, next to the ubtrace binary
// (a build tree), or PREFIX/lib/ubtrace (an installation).
Result<std::string> find_agent_library();

} // namespace ubtrace::backends
