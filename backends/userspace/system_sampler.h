// System-wide profile, perf event and system call probes: `profile:`,
// `software:`, `hardware:` and `tracepoint:syscalls` probes with neither
// -c nor -p, as bpftrace runs them on every
// CPU. There is no traced process to run them in, so the CLI opens one
// sampling perf event per CPU and event (pid -1, the kernel's perf
// machinery, no BPF), reads each event's ring every service of the
// user-space backend, and runs the event's probes, in script order, for
// every sample, on its interpreter: the probe sees the sampled thread.
//
// What a probe sees (the sampled-task helpers, system_sampler.cpp):
//   pid, tid, cpu      the sample's (pid and tid as ubtrace's PID namespace
//                      numbers them; 0 on an idle CPU)
//   comm               the thread's name ("swapper/N" on an idle CPU),
//                      kept current by the events' comm and exit records
//   nsecs              the sample's time (CLOCK_MONOTONIC)
//   reg(), ustack      the thread's user registers (where it last left user
//                      space when the sample fell in the kernel; zero for
//                      a kernel thread) and the kernel's user call chain
//                      (frame pointers, as bpftrace's ustack)
//   memory reads       the sampled process's memory, as it was at the
//                      sample or nothing (process_pins.h: a process
//                      ended, replaced under its number or exec'd since)
//   uid, gid, ppid,    read from /proc for the sampled process
//   cgroup
//
// System call probes (tracepoint:syscalls, raw_syscalls) ride the kernel's
// raw_syscalls:sys_enter and sys_exit tracepoints the same way: one event
// each per CPU, shared by every such probe, its kernel filter set to the
// numbers they name; each record runs the probes of its call with the
// context the agent would give them (foreign_task.h, fill_syscall_ctx),
// but what the arguments point to is read when the record is handled,
// not at the call (a process gone by then is counted). The CLI's own
// calls are dropped. The ids come from tracefs.
//
// A sample carries what the event's probes read and no more, since each
// part costs the sampled thread: the user call chain only for probes that
// call get_stack (ustack), all the user registers only for probes that
// read the context's registers (the verifier says which: reg(), helpers
// given ctx, a system call's arguments at its exit), else the instruction
// pointer alone (its ABI word tells a 32-bit task's calls apart).
//
// Needs root or CAP_PERFMON (kernel.perf_event_paranoid 0 or lower also
// lets anyone watch every CPU); the error names the setting. Probes on one
// event (same type, config and period) share it. Samples the kernel could
// not write (a ring full between two reads) are counted as lost.
#pragma once

#include "backends/backend.h"
#include "backends/program_set.h"
#include "backends/user_symbols.h"
#include "runtime/agent/named_values.h"
#include "runtime/bundle.h"
#include "runtime/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ubtrace::backends {

class SystemSampler {
public:
  // Whether `kind` is one the sampler runs system-wide.
  static bool samples(runtime::ProbeKind kind) {
    return kind == runtime::ProbeKind::Profile ||
           kind == runtime::ProbeKind::PerfEvent ||
           kind == runtime::ProbeKind::Syscall;
  }
  // The probes of `bundle` it runs, bound to the sampled-task helpers;
  // `host` prints what they write and says when exit() ran.
  static Result<std::unique_ptr<SystemSampler>>
  create(const runtime::Bundle &bundle, const ProgramSet &programs,
         UserSymbols &symbols, BackendHost &host,
         std::vector<std::string> &probe_names);
  ~SystemSampler();
  SystemSampler(const SystemSampler &) = delete;
  SystemSampler &operator=(const SystemSampler &) = delete;

  // Opens the events, disabled; how many probes it runs. An error when
  // the kernel refuses them (it names why).
  Result<size_t> attach();
  // Sampling starts (after the begin probes).
  void start();
  // Runs the probes of every sample taken since the last call, until one
  // of them calls exit().
  void drain();
  // Sampling stops; what is left in the rings is dropped.
  void detach();
  agent::NamedValues losses() const;

  struct Impl;

private:
  explicit SystemSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace ubtrace::backends
