// The CLI backend (see cli_backend.h).
#include "backends/cli/cli_backend.h"

#include "backends/session.h"
#include "runtime/abi.h"

#include <algorithm>

namespace ubtrace::backends {

Result<size_t> CliBackend::attach() {
  for (size_t i = 0; i < bundle_.probes.size(); i++) {
    const auto &p = bundle_.probes[i];
    if (!runs(p.kind))
      continue;
    if (p.kind == runtime::ProbeKind::Begin)
      begins_.push_back(i);
    else if (p.kind == runtime::ProbeKind::End)
      ends_.push_back(i);
    else if (p.kind == runtime::ProbeKind::SelfSignal)
      signals_.push_back(i);
    else
      intervals_.push_back({i, std::max<uint64_t>(p.interval_ns, 1000), 0});
  }
  // Signals that came before the trace began do not count.
  sigusr1_seen_ = g_sigusr1_count.load();
  return begins_.size() + ends_.size() + intervals_.size() + signals_.size();
}

void CliBackend::run(size_t index) {
  const auto &spec = bundle_.probes[index];
  const vm::BoundProgram *prog = programs_.bound(spec.section);
  if (!prog)
    return;
  abi::HostProbeCtx ctx{};
  ctx.probe_id = index;
  vm::RunResult r = vm::run(*prog, &ctx);
  if (r.status != vm::RunStatus::Ok)
    host_.runtime_error(std::string(vm::describe(r.status)) + " in " +
                        spec.name + " at PC " + std::to_string(r.stop_pc));
}

Result<void> CliBackend::start() {
  for (size_t i : begins_) {
    run(i);
    host_.drain_events();
    if (host_.exiting())
      break;
  }
  return {};
}

uint64_t CliBackend::fire_due(uint64_t now) {
  // self:signal:SIGUSR1: once for every round some arrived in, in script
  // order, as bpftrace runs them.
  if (uint64_t n = g_sigusr1_count.load(); n != sigusr1_seen_) {
    sigusr1_seen_ = n;
    for (size_t i : signals_) {
      host_.sync_maps(); // it may print GPU maps
      run(i);
      host_.drain_events();
      if (host_.exiting())
        return kNever;
    }
  }
  if (!timers_started_) {
    timers_started_ = true;
    for (auto &iv : intervals_)
      iv.next = now + iv.period;
  }
  uint64_t wait = kNever;
  for (auto &iv : intervals_) {
    if (iv.next <= now) {
      host_.sync_maps(); // the interval probe may print GPU maps
      run(iv.probe);
      host_.drain_events();
      iv.next += iv.period;
      if (iv.next <= now)
        iv.next = now + iv.period; // fell behind: do not burst
      if (host_.exiting())
        break;
    }
    wait = std::min(wait, iv.next > now ? iv.next - now : 0);
  }
  return wait;
}

void CliBackend::detach() {
  for (size_t i : ends_) {
    run(i);
    host_.drain_events();
  }
}

} // namespace ubtrace::backends
