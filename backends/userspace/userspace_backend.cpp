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
  if (!options.command.empty() || !options.pids.empty())
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
  std::unique_ptr<UserspaceBackend> b(new UserspaceBackend(
      bundle, programs, region, globals, probe_names, symbols, report));
  b->attached_ = options.command.empty();
  std::string first_error;
  auto add = [&](Result<std::unique_ptr<UserspaceTarget>> target, int pid) {
    if (!target) {
      if (first_error.empty())
        first_error = target.error();
      if (options.pids.size() > 1)
        report.warning("process " + std::to_string(pid) +
                       " is not traced: " + target.error());
      return;
    }
    UserspaceTarget &t = **target;
    t.set_warnings(
        [&report](const std::string &text) { report.warning(text); });
    t.set_snapshot_sink(
        [&symbols](const runtime::symbols::AddressSpace &space) {
          symbols.runtime().add_snapshot(space);
        });
    if (options.verbose)
      t.set_verbose([&report](const std::string &line) { report.info(line); });
    b->targets_.push_back(Traced{std::move(*target)});
  };
  if (!options.command.empty())
    add(UserspaceTarget::launch(options.command, *agent), 0);
  for (int pid : options.pids)
    add(UserspaceTarget::attach(pid, *agent), pid);
  if (b->targets_.empty())
    return make_error(options.pids.size() > 1
                          ? "none of the processes could be traced"
                          : first_error);
  if (globals && !options.command.empty())
    globals->cpid = static_cast<uint64_t>(b->pid());
  return b;
}

std::string UserspaceBackend::who(const Traced &t) const {
  if (targets_.size() < 2)
    return "";
  std::string w = "process " + std::to_string(t.target->pid());
  if (!t.target->comm().empty())
    w += " (" + t.target->comm() + ")";
  return w + ": ";
}

Result<size_t> UserspaceBackend::attach() {
  for (auto &t : targets_) {
    std::vector<int> others;
    for (const auto &o : targets_)
      if (o.target != t.target)
        others.push_back(o.target->pid());
    t.target->set_siblings(std::move(others));
  }
  size_t most = 0;
  std::string first_error;
  bool addresses_set = false;
  for (auto it = targets_.begin(); it != targets_.end();) {
    UserspaceTarget &t = *it->target;
    std::vector<std::string> warnings;
    auto hooked =
        t.install(warnings, bundle_, programs_, region_, probe_names_);
    for (const auto &w : warnings)
      report_.warning(who(*it) + w);
    // uaddr() symbols, after the Globals in the globals map's value: the
    // first process's (one value for every process).
    Result<std::vector<uint64_t>> addresses =
        hooked ? t.symbol_addresses(bundle_.uaddrs)
               : Result<std::vector<uint64_t>>(make_error(hooked.error()));
    if (!hooked || !addresses) {
      std::string why = hooked ? addresses.error() : hooked.error();
      if (first_error.empty())
        first_error = why;
      if (targets_.size() > 1)
        report_.warning("process " + std::to_string(t.pid()) +
                        " is not traced: " + why);
      it = targets_.erase(it); // detached as it goes
      continue;
    }
    if (!t.jit_error().empty())
      report_.warning(who(*it) + "probes run interpreted: " + t.jit_error());
    if (globals_ && !addresses_set)
      std::copy(addresses->begin(), addresses->end(),
                reinterpret_cast<uint64_t *>(globals_ + 1));
    addresses_set = true;
    // Addresses of a traced process print as symbols even after it exits,
    // and so do those of the children it forks.
    (void)symbols_.runtime().snapshot(t.pid());
    symbols_.set_traced(t.pid(), region_.fd());
    // Probes waiting for their library count as attached, as kernel
    // uprobes on a file do.
    most = std::max(most, *hooked + t.pending());
    ++it;
  }
  if (targets_.empty())
    return make_error(first_error);
  return most;
}

Result<void> UserspaceBackend::start() {
  for (auto &t : targets_)
    if (auto ok = t.target->go(); !ok)
      return ok;
  return {};
}

Result<void> UserspaceBackend::service() {
  std::string errors;
  for (auto &t : targets_) {
    if (t.done)
      continue;
    auto more = t.target->service();
    refresh_symbols(t, t.target->libraries_changed());
    if (!more)
      errors += (errors.empty() ? "" : "\n") + who(t) + more.error();
  }
  if (!errors.empty())
    return make_error(errors);
  return {};
}

std::vector<TargetNews> UserspaceBackend::news() {
  std::vector<TargetNews> out;
  for (auto &t : targets_) {
    if (t.done)
      continue;
    UserspaceTarget &target = *t.target;
    // Its agent is gone: nothing fires there any more. A process attached
    // to is done then; a command (-c) is waited for, as bpftrace does.
    // Said first: a program it exec'd may have ended already.
    if (!t.gone_said && target.agent_gone()) {
      t.gone_said = true;
      out.push_back({TargetNews::Kind::AgentGone, target.pid(), target.comm(),
                     target.hangup_reason(), std::nullopt});
      if (attached_) {
        t.done = true;
        out.back().last = done();
        continue;
      }
    }
    if (auto end = target.ended()) {
      t.ended = t.done = true;
      out.push_back(
          {TargetNews::Kind::Ended, target.pid(), target.comm(), "", end});
      out.back().last = done();
    }
  }
  return out;
}

bool UserspaceBackend::done() const {
  return std::all_of(targets_.begin(), targets_.end(),
                     [](const Traced &t) { return t.done; });
}

void UserspaceBackend::detach() {
  for (auto &t : targets_) {
    t.target->collect_counters();
    t.target->detach();
    refresh_symbols(t, true); // a process the trace outlives no more
  }
}

agent::NamedValues UserspaceBackend::losses() const {
  // Each process's counters; the report sums those of one name.
  agent::NamedValues all;
  for (const auto &t : targets_) {
    const auto &mine = t.target->agent_counters();
    all.insert(all.end(), mine.begin(), mine.end());
  }
  return all;
}

void UserspaceBackend::refresh_symbols(Traced &t, bool now) {
  uint64_t at = now_ns();
  if (!now && at - t.symbols_refreshed_ns < 1000000000ull)
    return;
  t.symbols_refreshed_ns = at;
  if (!t.ended)
    (void)symbols_.runtime().snapshot(t.target->pid());
}

} // namespace ubtrace::backends
