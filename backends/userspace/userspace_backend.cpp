// The user-space backend (see userspace_backend.h).
#include "backends/userspace/userspace_backend.h"

#include "backends/loss_report.h"
#include "backends/userspace/process_end.h"
#include "runtime/agent/protocol.h"
#include "runtime/proc_stat.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <unistd.h>

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
  b->verbose_ = options.verbose;
  b->agent_ = *agent;
  std::vector<std::string> agent_env;
  // -c: the command's own execs are followed (as bpftrace's -c follows its
  // pid), and with --follow its whole tree's.
  if (!options.command.empty()) {
    const char *option = options.follow ? "--follow: " : "-c: ";
    auto listener = runtime::inject::AgentListener::create_for(::getpid());
    if (!listener)
      return make_error(option + listener.error());
    auto token = runtime::inject::random_hex128();
    if (!token)
      return make_error(option + token.error());
    b->token_ = *token;
    b->seccomp_filters_ = seccomp_filters("self");
    agent_env.push_back(std::string(agent::kFollowEnv) + "=" + *token +
                        (options.follow ? " tree " : " command ") +
                        std::to_string(b->seccomp_filters_) + " " +
                        listener->entry_argument());
    b->listener_.emplace(std::move(*listener));
  }
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
    b->configure(**target);
    if (b->listener_)
      (*target)->set_follow();
    b->targets_.push_back(Traced{std::move(*target)});
  };
  if (!options.command.empty())
    add(UserspaceTarget::launch(options.command, *agent, agent_env), 0);
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

void UserspaceBackend::configure(UserspaceTarget &t) {
  t.share_binaries(binaries_);
  t.share_native_code(native_code_);
  t.set_warnings([this](const std::string &text) { report_.warning(text); });
  t.set_snapshot_sink([this](const runtime::symbols::AddressSpace &space) {
    symbols_.runtime().add_snapshot(space);
  });
  if (verbose_)
    t.set_verbose([this](const std::string &line) { report_.info(line); });
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

void UserspaceBackend::take_followers() {
  if (!listener_)
    return;
  // A program of the tree sends its token as it connects; anyone else
  // may connect too (the name is public) and say nothing. Such a one is
  // kept a second at most, and the oldest makes room for a newcomer, so
  // silence neither holds the session up nor shuts the tree out.
  constexpr size_t kMostPending = 64;
  uint64_t now = now_ns();
  for (int n = 0; n < 16; ++n) {
    pid_t pid = 0;
    auto channel = listener_->accept_now(pid);
    if (!channel)
      break;
    if (pending_.size() >= kMostPending)
      pending_.erase(pending_.begin());
    pending_.push_back({std::move(*channel), pid, now});
  }
  // A few at a time: each waits before main meanwhile, the others in
  // connect(); the session's other work comes between.
  int adopted = 0;
  for (auto it = pending_.begin(); it != pending_.end() && adopted < 16;) {
    auto first = agent::recv_message(it->channel.fd(), 0);
    if (!first && first.error() == agent::kChannelTimedOut &&
        now - it->since_ns < 1000000000ull) {
      ++it;
      continue;
    }
    Pending p = std::move(*it);
    it = pending_.erase(it);
    // Only a program of the tree knows the token (protocol.h): whatever
    // else connects is dropped without a word.
    if (!first || first->type != agent::MsgType::Follow ||
        std::string(first->payload.begin(), first->payload.end()) != token_ ||
        p.pid <= 0)
      continue;
    ++adopted;
    adopt_follower(p.pid, std::move(p.channel));
    // Taking one on takes a while: the clock moves.
    now = now_ns();
  }
}

void UserspaceBackend::adopt_follower(pid_t pid,
                                      runtime::inject::AgentChannel channel) {
  auto fail = [&](const std::string &why) {
    ++follow_failed_;
    if (verbose_)
      report_.info("process " + std::to_string(pid) + " (" + process_comm(pid) +
                   ") is not followed: " + why);
  };
  auto adopted =
      UserspaceTarget::adopt(pid, channel.release_fd().release(), agent_);
  if (!adopted)
    return fail(adopted.error());
  UserspaceTarget &t = **adopted;
  configure(t);
  t.set_follow();
  // The same warning from every copy of a program is said once.
  t.set_warnings([this](const std::string &text) {
    if (said_.insert(text).second)
      report_.warning(text);
  });
  std::vector<std::string> warnings;
  auto hooked = t.install(warnings, bundle_, programs_, region_, probe_names_);
  for (const auto &w : warnings)
    if (said_.insert(w).second)
      report_.warning(w);
  if (!hooked)
    return fail(hooked.error()); // its agent unhooks as it is let go
  if (!t.jit_error().empty() && said_.insert(t.jit_error()).second)
    report_.warning("probes run interpreted: " + t.jit_error());
  (void)symbols_.runtime().snapshot(pid);
  symbols_.set_traced(pid, region_.fd());
  // The process it was before the exec is now this one.
  for (auto &o : targets_)
    if (o.target->pid() == pid)
      o.succeeded = true;
  if (auto go = t.go(); !go)
    return fail(go.error());
  ++followed_;
  if (verbose_)
    report_.info("following process " + std::to_string(pid) + " (" + t.comm() +
                 "): " + std::to_string(*hooked) + " sites hooked");
  Traced traced{std::move(*adopted)};
  traced.follower = true;
  targets_.push_back(std::move(traced));
}

Result<void> UserspaceBackend::service() {
  take_followers();
  std::string errors;
  for (auto &t : targets_) {
    if (t.done)
      continue;
    auto more = t.target->service();
    refresh_symbols(t, t.target->libraries_changed());
    // A follower's trouble (it died mid-request) retires it: no news.
    if (!more && !t.follower)
      errors += (errors.empty() ? "" : "\n") + who(t) + more.error();
  }
  if (!errors.empty())
    return make_error(errors);
  return {};
}

bool UserspaceBackend::exec_unfollowed(Traced &t, uint64_t now) {
  if (!t.gone_ns)
    t.gone_ns = now;
  return !t.succeeded &&
         (now - t.gone_ns >= 1000000000ull || t.target->ended());
}

std::vector<TargetNews> UserspaceBackend::news() {
  std::vector<TargetNews> out;
  uint64_t now = now_ns();
  for (auto &t : targets_) {
    if (t.done)
      continue;
    UserspaceTarget &target = *t.target;
    if (t.follower) {
      // Followers make no news, but for the command's own exec chain
      // (its pid) whose next program did not connect, said as for the
      // command. One is retired once it ended, or once its agent hung up
      // and (an exec) the program it became connected, or did not within
      // a second.
      // One that closed its descriptors, the agent's too, runs on
      // untraced (however soon it ends); otherwise it exec'd, or it
      // could not be told.
      bool ended = target.ended().has_value(); // judges a hangup first
      if (target.agent_gone() && !target.hung_up_by_exec() &&
          !target.hangup_reason().empty()) {
        t.ended = ended;
        t.done = true;
        ++agent_closed_;
      } else if (ended) {
        t.ended = t.done = true;
        // What it exec'd ran untraced, and is over already.
        exec_lost_ += target.hung_up_by_exec() && !t.succeeded ? 1 : 0;
      } else if (target.agent_gone() &&
                 (t.succeeded || exec_unfollowed(t, now))) {
        t.done = true;
        if (t.succeeded)
          continue;
        ++exec_lost_;
        if (target.pid() == pid())
          out.push_back({TargetNews::Kind::AgentGone, target.pid(),
                         target.comm(), target.hangup_reason(), std::nullopt});
      }
      continue;
    }
    // Its agent is gone: nothing fires there any more. A process attached
    // to is done then; a command (-c) is waited for, as bpftrace does.
    // Said first: a program it exec'd may have ended already. Under
    // --follow, an exec whose program connected is no news, and one whose
    // program did not is said after a second.
    if (!t.gone_said && target.agent_gone() &&
        (!listener_ || exec_unfollowed(t, now) || t.succeeded)) {
      t.gone_said = true;
      if (listener_ && t.succeeded)
        continue;
      exec_lost_ += listener_ && target.hung_up_by_exec() ? 1 : 0;
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
  // Followers done are let go: a tree that runs thousands of programs
  // keeps only those that live. Their counters stay.
  for (auto it = targets_.begin(); it != targets_.end();) {
    if (!it->follower || !it->done) {
      ++it;
      continue;
    }
    it->target->collect_counters();
    const auto &mine = it->target->agent_counters();
    retired_.insert(retired_.end(), mine.begin(), mine.end());
    refresh_symbols(*it, true);
    it = targets_.erase(it);
  }
  return out;
}

bool UserspaceBackend::done() const {
  // Under --follow the command holds the trace: its followers are
  // detached when it ends, as bpftrace -c ends with the command.
  return std::all_of(targets_.begin(), targets_.end(),
                     [](const Traced &t) { return t.done || t.follower; });
}

void UserspaceBackend::detach() {
  if (verbose_ && followed_)
    report_.info("followed " + std::to_string(followed_) + " program" +
                 (followed_ == 1 ? "" : "s") + " through exec");
  for (auto &t : targets_) {
    t.target->collect_counters();
    t.target->detach();
    refresh_symbols(t, true); // a process the trace outlives no more
  }
}

agent::NamedValues UserspaceBackend::losses() const {
  // Each process's counters; the report sums those of one name.
  agent::NamedValues all = retired_;
  if (listener_) {
    all.emplace_back(kFollowFailed, follow_failed_);
    all.emplace_back(kFollowExecLost, exec_lost_);
    all.emplace_back(kFollowAgentClosed, agent_closed_);
  }
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
