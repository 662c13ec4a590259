// The user-space backend (backend.h): runs a bundle's uprobe, uretprobe
// and usdt probes in one traced process (-c CMD or -p PID) through the
// agent inside it (target.h), and keeps the printer's view of that
// process's address space current (user_symbols.h), so its addresses print
// as symbols, even after it exits.
//
// A trace with -c or -p has one whether or not it has user-space probes:
// the process is what the trace waits for, and its end ends the trace.
#pragma once

#include "backends/backend.h"
#include "backends/program_set.h"
#include "backends/reporter.h"
#include "backends/user_symbols.h"
#include "backends/userspace/target.h"
#include "runtime/abi.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::backends {

struct UserspaceBackendOptions {
  std::string command; // -c: run and trace it
  int pid = 0;         // -p: trace it
  int verbose = 0;     // -v: an INFO line for each site hooked
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
  // agent into the process. `globals` (may be null) gets the command's pid
  // (cpid) and the uaddr() addresses; `probe_names` the names of what
  // wildcards expand to.
  static Result<std::unique_ptr<UserspaceBackend>>
  create(const runtime::Bundle &bundle, const ProgramSet &programs,
         runtime::maps::Region &region, abi::Globals *globals,
         std::vector<std::string> &probe_names, UserSymbols &symbols,
         Reporter &report, const UserspaceBackendOptions &options);

  BackendKind kind() const override { return BackendKind::Userspace; }
  // Hooks the probes; those waiting for a library count as attached, as
  // kernel uprobes on a file do.
  Result<size_t> attach() override;
  // Lets a command run (-p: nothing).
  Result<void> start() override;
  // Every 5 ms: a thread waiting in dlopen for its library's hooks waits
  // little.
  uint64_t service_period_ns() const override { return 5000000; }
  // Libraries the process loaded get their probes hooked.
  Result<void> service() override;
  bool fires_later() const override { return true; }
  // Unhooks: the process runs on untraced.
  void detach() override;
  agent::NamedValues losses() const override;

  int pid() const { return target_->pid(); }
  const std::string &comm() const { return target_->comm(); }
  // The process's end, once it ended (non-blocking; the session's loop).
  std::optional<ProcessEnd> ended();
  // Its agent hung up while the process lives on (target.h).
  bool agent_gone() { return target_->agent_gone(); }
  const std::string &hangup_reason() const { return target_->hangup_reason(); }
  // Hands the agent the GPU channel (gpu::GpuBackend's attach()).
  Result<void> pass_gpu_channel(int fd) {
    return target_->pass_gpu_channel(fd);
  }

private:
  UserspaceBackend(const runtime::Bundle &bundle, const ProgramSet &programs,
                   runtime::maps::Region &region, abi::Globals *globals,
                   std::vector<std::string> &probe_names, UserSymbols &symbols,
                   Reporter &report)
      : bundle_(bundle), programs_(programs), region_(region),
        globals_(globals), probe_names_(probe_names), symbols_(symbols),
        report_(report) {}
  // The process's mappings for printing its addresses: looked at again
  // when it reported a library, and every second (libraries it loaded
  // without a probe waiting for them), while it lives.
  void refresh_symbols(bool now);

  const runtime::Bundle &bundle_;
  const ProgramSet &programs_;
  runtime::maps::Region &region_;
  abi::Globals *globals_;
  std::vector<std::string> &probe_names_;
  UserSymbols &symbols_;
  Reporter &report_;
  std::unique_ptr<UserspaceTarget> target_;
  uint64_t symbols_refreshed_ns_ = 0;
  bool ended_ = false;
};

} // namespace ubtrace::backends
