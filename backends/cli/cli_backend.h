// The CLI backend (backend.h): the probes ubtrace runs in its own process,
// on the host's interpreter, at points of the trace's life rather than in
// a traced process: begin (when the trace starts), end (when it ends) and
// interval (on a timer, while it runs), self:signal:SIGUSR1 (when ubtrace
// receives the signal; checked each round of the session's loop, so within
// ~100 ms). A trace of nothing else ends after its begin probes, as in
// bpftrace.
#pragma once

#include "backends/backend.h"
#include "backends/program_set.h"

#include <optional>
#include <vector>

namespace ubtrace::backends {

// What the CLI backend runs after the begin probes: the trace (interval
// and self probes), the bench: probes timed (--bench), or the test: probes
// judged (--test). Bench and test probes are not attached in another mode;
// in theirs, interval and self probes are not, as in bpftrace.
enum class CliMode : uint8_t { Run, Bench, Test };

class CliBackend final : public Backend {
public:
  CliBackend(const runtime::Bundle &bundle, const ProgramSet &programs,
             BackendHost &host, CliMode mode = CliMode::Run)
      : bundle_(bundle), programs_(programs), host_(host), mode_(mode) {}

  BackendKind kind() const override { return BackendKind::Cli; }
  Result<size_t> attach() override;
  // The begin probes, each one's events printed before the next runs,
  // until one calls exit().
  Result<void> start() override;
  // The interval probes that are due; the first call starts their timers.
  uint64_t fire_due(uint64_t now_ns) override;
  bool fires_later() const override {
    return !intervals_.empty() || !signals_.empty();
  }
  // The end probes, each one's events printed before the next runs.
  void detach() override;

private:
  // Runs the program of `probe` once; its r0 when it ran to the end.
  std::optional<uint64_t> run(size_t probe);
  void run_benches();
  void run_tests();

  struct Interval {
    size_t probe;
    uint64_t period;
    uint64_t next;
  };
  const runtime::Bundle &bundle_;
  const ProgramSet &programs_;
  BackendHost &host_;
  CliMode mode_;
  std::vector<size_t> begins_, ends_, signals_, benches_, tests_;
  uint64_t sigusr1_seen_ = 0;
  std::vector<Interval> intervals_;
  bool timers_started_ = false;
};

} // namespace ubtrace::backends
