// A backend runs the probes of one kind of target. The selector,
// backend_for(), gives every probe kind to exactly one backend:
//
//   CLI         begin, end, interval,    run in the CLI itself (cli/)
//               self, bench
//   user-space  uprobe, uretprobe, usdt  the agent in the traced process
//                                        (userspace/)
//   GPU         kernel, kernelret        PTX in the traced process's CUDA
//                                        modules (gpu/)
//
// The session (session.h) owns the maps region, the event ring and the
// printer, and drives its backends through one life, in their order above
// (detach in reverse):
//
//   attach()       each backend attaches its probes; the sum of what they
//                  attached is "Attached N probes"
//   start()        the trace begins: the CLI runs the begin probes, the
//                  user-space backend lets its command run
//   the loop       fire_due() (probes on a timer: interval), then a wait
//                  for events of at most every service_period_ns(), then
//                  service() (what the traced process or its agent sent);
//                  sync_maps() before maps print, clear_map() for
//                  clear()/zero()
//   detach()       the GPU reads its maps back, the user-space backend
//                  unhooks, the CLI runs the end probes
//   losses()       what each lost on the way, for the report at exit
//
// Backends report problems that stop the trace as errors of attach(), and
// say the rest through the session's Reporter (reporter.h) and its
// BackendHost.
#pragma once

#include "runtime/agent/named_values.h"
#include "runtime/bundle.h"
#include "runtime/result.h"

#include <cstdint>
#include <limits>
#include <string>

namespace ubtrace::output {
struct FormatContext;
} // namespace ubtrace::output

namespace ubtrace::backends {

enum class BackendKind : uint8_t { Cli, Userspace, Gpu };
inline constexpr BackendKind kBackendKinds[] = {
    BackendKind::Cli, BackendKind::Userspace, BackendKind::Gpu};

// Every probe kind of the bundle (runtime::ProbeKind), in its order.
inline constexpr runtime::ProbeKind kProbeKinds[] = {
    runtime::ProbeKind::Begin,          runtime::ProbeKind::End,
    runtime::ProbeKind::Interval,       runtime::ProbeKind::Uprobe,
    runtime::ProbeKind::Uretprobe,      runtime::ProbeKind::Usdt,
    runtime::ProbeKind::GpuKernelEntry, runtime::ProbeKind::GpuKernelExit,
    runtime::ProbeKind::SelfSignal,     runtime::ProbeKind::Bench,
    runtime::ProbeKind::Profile,        runtime::ProbeKind::Test,
    runtime::ProbeKind::Syscall,        runtime::ProbeKind::PerfEvent};

// The selector: the backend that runs probes of `kind`. The one place the
// choice is made; a new kind fails to compile here (-Wswitch) until it has
// a backend.
constexpr BackendKind backend_for(runtime::ProbeKind kind) {
  switch (kind) {
  case runtime::ProbeKind::Begin:
  case runtime::ProbeKind::End:
  case runtime::ProbeKind::Interval:
  case runtime::ProbeKind::SelfSignal:
  case runtime::ProbeKind::Bench:
  case runtime::ProbeKind::Test:
    return BackendKind::Cli;
  case runtime::ProbeKind::Uprobe:
  case runtime::ProbeKind::Uretprobe:
  case runtime::ProbeKind::Usdt:
  case runtime::ProbeKind::Profile:
  case runtime::ProbeKind::Syscall:
  case runtime::ProbeKind::PerfEvent:
    return BackendKind::Userspace;
  case runtime::ProbeKind::GpuKernelEntry:
  case runtime::ProbeKind::GpuKernelExit:
    return BackendKind::Gpu;
  }
  return BackendKind::Cli;
}

// "CLI", "user-space", "GPU".
const char *backend_name(BackendKind kind);
// A probe kind as scripts spell its type: "begin", "uprobe", "kernel", ...
const char *probe_kind_name(runtime::ProbeKind kind);
// The probe kinds a backend runs, as --info lists them: "begin, end,
// interval".
std::string probe_kinds_of(BackendKind kind);

// What the session does for its backends.
// What a test probe printed while the session held its output back
// (BackendHost::begin_capture).
struct Captured {
  std::string text; // as the output format would have printed it
  uint64_t errors;  // errorf() calls, failed helpers, runtime errors
  int exit_code;    // of an exit() it called, 0 without one
};

class BackendHost {
public:
  // Prints the events the probes wrote so far (a probe the backend ran
  // itself prints before whatever comes next).
  virtual void drain_events() = 0;
  // exit() ran: the trace ends.
  virtual bool exiting() const = 0;
  // Brings every backend's maps up to date, before a probe that may print
  // them runs.
  virtual void sync_maps() = 0;
  // A problem of the running trace, printed as the output format prints
  // runtime errors (output::Output::runtime_error).
  virtual void runtime_error(const std::string &text) = 0;
  // Drops the events the probes wrote so far, unprinted (--bench).
  virtual void discard_events() = 0;
  // ubtrace's exit status, unless exit() sets one.
  virtual void set_exit_code(int code) = 0;
  // --bench: one bench probe's result, printed as the format prints it.
  virtual void benchmark_result(const std::vector<std::string> &names,
                                size_t index, uint64_t average_ns,
                                uint64_t iters) = 0;
  // --test: what the probes print from now on is held back, until
  // end_capture() hands it over; an exit() meanwhile ends nothing.
  virtual void begin_capture() = 0;
  virtual Captured end_capture() = 0;
  // --test: one test probe's result (names: every test probe, in order;
  // passed: the results so far).
  virtual void test_result(const std::vector<std::string> &names, size_t index,
                           uint64_t duration_ns,
                           const std::vector<bool> &passed,
                           const std::string &output) = 0;

protected:
  ~BackendHost() = default;
};

class Backend {
public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  virtual ~Backend() = default;

  virtual BackendKind kind() const = 0;
  // Whether this backend runs probes of `probe` (the selector's choice).
  bool runs(runtime::ProbeKind probe) const {
    return backend_for(probe) == kind();
  }

  // Attaches the probes of the bundle it runs; returns how many count as
  // attached. An error stops the trace before it starts.
  virtual Result<size_t> attach() = 0;
  // Once attached: what the printer needs from it to print what its probes
  // write (the GPU's kernel names).
  virtual void prepare_printer(output::FormatContext &fmt) { (void)fmt; }
  // The trace begins (every backend attached). An error is said, and the
  // trace goes on.
  virtual Result<void> start() { return {}; }
  // Runs the probes it fires on a timer that are due at `now_ns`
  // (CLOCK_MONOTONIC); returns how long until the next is due.
  virtual uint64_t fire_due(uint64_t now_ns) {
    (void)now_ns;
    return kNever;
  }
  // The longest the session may wait for events before service() again.
  virtual uint64_t service_period_ns() const { return kNever; }
  // Takes what its side sent since the last call (non-blocking). An error
  // is a runtime error of the trace, which goes on.
  virtual Result<void> service() { return {}; }
  // Whether its probes can fire after start(): when no backend's can, the
  // trace ends after the begin probes.
  virtual bool fires_later() const = 0;
  // Maps it keeps elsewhere copied into the region, before they print.
  virtual Result<void> sync_maps() { return {}; }
  // clear() or zero() of a map reaches the copies it keeps.
  virtual void clear_map(uint32_t map, bool zero) {
    (void)map;
    (void)zero;
  }
  // The trace ends: its probes stop firing.
  virtual void detach() = 0;
  // What it lost, as named counters (loss_report.h names them).
  virtual agent::NamedValues losses() const { return {}; }
};

} // namespace ubtrace::backends
