// The CLI backend (see cli_backend.h).
#include "backends/cli/cli_backend.h"

#include "backends/session.h"
#include "runtime/abi.h"

#include <algorithm>
#include <chrono>

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
    else if (p.kind == runtime::ProbeKind::Bench) {
      if (mode_ == CliMode::Bench)
        benches_.push_back(i);
    } else if (p.kind == runtime::ProbeKind::Test) {
      if (mode_ == CliMode::Test)
        tests_.push_back(i);
    } else if (mode_ != CliMode::Run)
      continue; // interval and self probes: the trace's, not run here
    else if (p.kind == runtime::ProbeKind::SelfSignal)
      signals_.push_back(i);
    else
      intervals_.push_back({i, std::max<uint64_t>(p.interval_ns, 1000), 0});
  }
  // Signals that came before the trace began do not count.
  sigusr1_seen_ = g_sigusr1_count.load();
  return begins_.size() + ends_.size() + intervals_.size() + signals_.size() +
         benches_.size() + tests_.size();
}

std::optional<uint64_t> CliBackend::run(size_t index) {
  const auto &spec = bundle_.probes[index];
  const vm::BoundProgram *prog = programs_.bound(spec.section);
  if (!prog)
    return std::nullopt;
  abi::HostProbeCtx ctx{};
  ctx.probe_id = index;
  vm::RunResult r = vm::run(*prog, &ctx);
  if (r.status != vm::RunStatus::Ok) {
    host_.runtime_error(std::string(vm::describe(r.status)) + " in " +
                        spec.name + " at PC " + std::to_string(r.stop_pc));
    return std::nullopt;
  }
  return r.r0;
}

// Each bench probe runs in batches, the batch ten to a thousand times
// larger while it takes under 100 us and doubled up to 1 ms, as bpftrace
// sizes its runs; the time of the last batch over its runs is the result.
// What the probe prints is dropped. A probe that returns non-zero skips
// its benchmark; one that stops with an error fails the run.
void CliBackend::run_benches() {
  std::vector<std::string> names;
  for (size_t i : benches_)
    names.push_back(bundle_.probes[i].target);
  for (size_t k = 0; k < benches_.size(); k++) {
    const size_t probe = benches_[k];
    uint64_t iters = 1;
    while (true) {
      const auto start = std::chrono::steady_clock::now();
      bool skipped = false, failed = false;
      for (uint64_t n = 0; n < iters; n++) {
        auto r0 = run(probe);
        if (!r0 || host_.exiting()) {
          failed = true;
          break;
        }
        if (*r0 != 0) {
          skipped = true;
          break;
        }
      }
      const uint64_t total = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::chrono::steady_clock::now() - start)
              .count());
      host_.discard_events();
      if (failed) {
        host_.runtime_error("Benchmark '" + names[k] + "' failed.");
        host_.set_exit_code(1);
        return;
      }
      if (skipped)
        break;
      if (total < 1000)
        iters *= 1000;
      else if (total < 10000)
        iters *= 100;
      else if (total < 100000)
        iters *= 10;
      else if (total < 1000000)
        iters *= 2;
      else {
        host_.benchmark_result(names, k, total / iters, iters);
        break;
      }
    }
  }
}

// Each test probe runs once, in script order, with what it prints held
// back: it passes when it returns 0, calls no exit() with a non-zero code
// and prints no error (errorf(), a failed helper, a runtime error); the
// held output is shown only for a failure. exit() ends only its own test.
// A failure makes ubtrace's exit status 1.
void CliBackend::run_tests() {
  std::vector<std::string> names;
  for (size_t i : tests_)
    names.push_back(bundle_.probes[i].target);
  std::vector<bool> passed;
  for (size_t k = 0; k < tests_.size(); k++) {
    host_.begin_capture();
    const auto start = std::chrono::steady_clock::now();
    auto r0 = run(tests_[k]);
    const uint64_t ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now() - start)
            .count());
    host_.drain_events();
    Captured got = host_.end_capture();
    passed.push_back(r0 && *r0 == 0 && got.exit_code == 0 && got.errors == 0);
    host_.test_result(names, k, ns, passed, got.text);
    if (!passed.back())
      host_.set_exit_code(1);
  }
}

Result<void> CliBackend::start() {
  for (size_t i : begins_) {
    run(i);
    host_.drain_events();
    if (host_.exiting())
      return {};
  }
  if (!benches_.empty())
    run_benches();
  if (!tests_.empty())
    run_tests();
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
