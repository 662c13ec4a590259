// The user-space backend (see userspace_backend.h).
#include "backends/userspace/userspace_backend.h"

#include <algorithm>
#include <ctime>
#include <filesystem>

namespace ubtrace::backends {
namespace {

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

} // namespace

Result<void> UserspaceBackend::check(const runtime::Bundle &bundle,
                                     const UserspaceBackendOptions &options) {
  if (!options.command.empty() || options.pid != 0)
    return {};
  runtime::symbols::ProbeResolverOptions resolve;
  resolve.allow_zero_size = bundle.unsafe;
  resolve.allow_unresolved_address = bundle.unsafe;
  runtime::symbols::ProbeResolver resolver(resolve);
  for (const auto &spec : bundle.probes) {
    auto req = attach_request(spec);
    // Library names and wildcards need the process's view of its files.
    std::error_code ec;
    if (!req || req->target.find('/') == std::string::npos ||
        req->target.find_first_of("*?[") != std::string::npos ||
        !std::filesystem::is_regular_file(req->target, ec))
      continue;
    auto got = resolver.expand(*req);
    std::vector<std::string> warnings;
    if (auto judged = judge_expansion(spec, *req, got, resolver,
                                      bundle.config.missing_probes, warnings);
        !judged)
      return make_error(judged.error());
  }
  bool hooks = std::any_of(
      bundle.probes.begin(), bundle.probes.end(), [](const auto &p) {
        return backend_for(p.kind) == BackendKind::Userspace &&
               p.kind != runtime::ProbeKind::Profile &&
               p.kind != runtime::ProbeKind::PerfEvent &&
               p.kind != runtime::ProbeKind::Syscall;
      });
  bool syscalls = std::any_of(
      bundle.probes.begin(), bundle.probes.end(),
      [](const auto &p) { return p.kind == runtime::ProbeKind::Syscall; });
  bool events = std::any_of(
      bundle.probes.begin(), bundle.probes.end(),
      [](const auto &p) { return p.kind == runtime::ProbeKind::PerfEvent; });
  return make_error(std::string(hooks      ? "user-space"
                                : syscalls ? "system call"
                                : events   ? "software and hardware event"
                                           : "profile") +
                    " probes need a process to trace: use -c 'CMD' or -p PID "
                    "(ubtrace traces inside processes, not system-wide)");
}

Result<std::unique_ptr<UserspaceBackend>> UserspaceBackend::create(
    const runtime::Bundle &bundle, const ProgramSet &programs,
    runtime::maps::Region &region, abi::Globals *globals,
    std::vector<std::string> &probe_names, UserSymbols &symbols,
    Reporter &report, const UserspaceBackendOptions &options) {
  auto agent = find_agent_library();
  if (!agent)
    return std::move(agent).take_error();
  auto target = options.command.empty()
                    ? UserspaceTarget::attach(options.pid, *agent)
                    : UserspaceTarget::launch(options.command, *agent);
  if (!target)
    return std::move(target).take_error();
  std::unique_ptr<UserspaceBackend> b(new UserspaceBackend(
      bundle, programs, region, globals, probe_names, symbols, report));
  b->target_ = std::move(*target);
  UserspaceTarget &t = *b->target_;
  t.set_warnings([&report](const std::string &text) { report.warning(text); });
  t.set_snapshot_sink([&symbols](const runtime::symbols::AddressSpace &space) {
    symbols.runtime().add_snapshot(space);
  });
  if (options.verbose)
    t.set_verbose([&report](const std::string &line) { report.info(line); });
  if (globals && !options.command.empty())
    globals->cpid = static_cast<uint64_t>(t.pid());
  return b;
}

Result<size_t> UserspaceBackend::attach() {
  std::vector<std::string> warnings;
  auto hooked =
      target_->install(warnings, bundle_, programs_, region_, probe_names_);
  for (const auto &w : warnings)
    report_.warning(w);
  if (!hooked)
    return std::move(hooked).take_error();
  if (!target_->jit_error().empty())
    report_.warning("probes run interpreted: " + target_->jit_error());
  // uaddr() symbols, after the Globals in the globals map's value.
  auto addresses = target_->symbol_addresses(bundle_.uaddrs);
  if (!addresses)
    return std::move(addresses).take_error();
  if (globals_)
    std::copy(addresses->begin(), addresses->end(),
              reinterpret_cast<uint64_t *>(globals_ + 1));
  // Addresses of the traced process print as symbols even after it exits,
  // and so do those of the children it forks.
  (void)symbols_.runtime().snapshot(target_->pid());
  symbols_.set_traced(target_->pid(), region_.fd());
  // Probes waiting for their library count as attached, as kernel
  // uprobes on a file do.
  return *hooked + target_->pending();
}

Result<void> UserspaceBackend::start() {
  return target_->go();
}

Result<void> UserspaceBackend::service() {
  auto more = target_->service();
  refresh_symbols(target_->libraries_changed());
  if (!more)
    return std::move(more).take_error();
  return {};
}

std::optional<ProcessEnd> UserspaceBackend::ended() {
  auto end = target_->ended();
  ended_ = ended_ || end.has_value();
  return end;
}

void UserspaceBackend::detach() {
  target_->collect_counters();
  target_->detach();
  refresh_symbols(true); // a process the trace outlives no more
}

agent::NamedValues UserspaceBackend::losses() const {
  return target_->agent_counters();
}

void UserspaceBackend::refresh_symbols(bool now) {
  uint64_t t = now_ns();
  if (!now && t - symbols_refreshed_ns_ < 1000000000ull)
    return;
  symbols_refreshed_ns_ = t;
  if (!ended_)
    (void)symbols_.runtime().snapshot(target_->pid());
}

} // namespace ubtrace::backends
