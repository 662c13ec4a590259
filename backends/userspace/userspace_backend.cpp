// The user-space backend (see userspace_backend.h).
#include "backends/userspace/userspace_backend.h"

#include "backends/loss_report.h"
#include "backends/userspace/command_exec.h"
#include "backends/userspace/foreign_task.h"
#include "backends/userspace/process_end.h"
#include "runtime/agent/protocol.h"
#include "runtime/inject/spawn.h"
#include "runtime/inject/target_process.h"
#include "runtime/proc_stat.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ubtrace::backends {
namespace {

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// One program run by one process: its start time and its program's inode
// (an exec changes the second; an ordinary user may not read another's
// exe, which then counts as 0).
uint64_t image_key(pid_t pid, unsigned long long start_time) {
  struct stat st;
  uint64_t ino =
      ::stat(("/proc/" + std::to_string(pid) + "/exe").c_str(), &st) == 0
          ? st.st_ino
          : 0;
  return start_time * 0x9e3779b97f4a7c15ull ^ ino;
}

// The probes on files, counted as bpftrace counts uprobes on a file: each
// function a wildcard matches once, however many processes run it.
size_t probes_on_files(const runtime::Bundle &bundle) {
  runtime::symbols::ProbeResolverOptions resolve;
  resolve.allow_zero_size = bundle.unsafe;
  resolve.allow_unresolved_address = bundle.unsafe;
  runtime::symbols::ProbeResolver resolver(resolve);
  size_t n = 0;
  for (const auto &spec : bundle.probes)
    if (auto req = attach_request(spec))
      if (auto got = resolver.expand(*req))
        n += got->size();
  return n;
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
  // Probes hooked into code run system-wide (system_wide.h), sampled ones
  // from the CLI (system_sampler.h). A watchpoint's address is one process's:
  // system-wide it means none.
  for (const auto &p : bundle.probes)
    if (p.kind == runtime::ProbeKind::PerfEvent &&
        p.perf_type == PERF_TYPE_BREAKPOINT)
      return make_error(
          "watchpoint probes need a process to trace: use -c 'CMD' or -p "
          "PID (the address is one in the traced process's memory)");
  return {};
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
  b->host_ = options.host;
  b->agent_ = *agent;
  if (options.system_wide) {
    b->system_wide_ = true;
    if (std::any_of(
            bundle.probes.begin(), bundle.probes.end(),
            [](const auto &p) { return SystemSampler::samples(p.kind); })) {
      if (!options.host)
        return make_error("BUG: system-wide sampling without a host");
      auto sampler = SystemSampler::create(bundle, programs, symbols,
                                           *options.host, probe_names);
      if (!sampler)
        return std::move(sampler).take_error();
      b->sampler_ = std::move(*sampler);
    }
    auto files = system_wide_files(bundle);
    if (!files)
      return std::move(files).take_error();
    if (files->empty())
      return b; // sampled probes only
    auto scout = ProcessScout::create(*files, region.fd());
    if (!scout)
      return std::move(scout).take_error();
    b->scout_.emplace(std::move(*scout));
    b->seccomp_filters_ = seccomp_filters("self");
    b->probes_ = probes_on_files(bundle);
    if (b->verbose_) {
      std::string list;
      for (const auto &f : *files)
        list += (list.empty() ? "" : ", ") + f;
      report.info("system-wide: every process that maps " + list +
                  "; new ones found through " + b->scout_->how());
    }
    return b;
  }
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
  if (!options.command.empty()) {
    // The command's calls before its agent runs, where system call probes
    // would see them (command_exec.h).
    bool syscalls = std::any_of(
        bundle.probes.begin(), bundle.probes.end(),
        [](const auto &p) { return p.kind == runtime::ProbeKind::Syscall; });
    auto launched = UserspaceTarget::launch(
        options.command, *agent, agent_env, syscalls,
        {b->listener_ ? &*b->listener_ : nullptr, b->token_});
    const runtime::inject::ExecCall *exec =
        launched ? (*launched)->exec_call() : nullptr;
    if (syscalls && exec && !exec->loader.missing.empty())
      report.warning("the command's system calls before the agent ran are "
                     "not all seen: " +
                     exec->loader.missing);
    if (syscalls && exec && exec->loader.forked)
      report.warning(
          "the command forked " + std::to_string(exec->loader.forked) +
          " process(es) before its agent ran (in a library's initialiser): "
          "their system calls until an agent of their own runs are not seen");
    if (syscalls && exec && exec->loader.threads)
      report.warning(
          "the command started " + std::to_string(exec->loader.threads) +
          " thread(s) before its agent ran (in a library's initialiser): "
          "their system calls until then are not seen");
    if (syscalls && exec && options.verbose) {
      const auto &calls = exec->loader.calls;
      size_t ours = std::count_if(calls.begin(), calls.end(),
                                  [](const auto &c) { return c.ubtraces; });
      report.info("the command's loader: " + std::to_string(calls.size()) +
                  " system calls followed in " +
                  std::to_string(exec->loader.followed_ns / 1000) + " us, " +
                  std::to_string(ours) +
                  " of them loading ubtrace's "
                  "libraries (not run)");
    }
    add(std::move(launched), 0);
  }
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
  if (sampler_)
    t.set_sampled_elsewhere();
  t.set_warnings([this](const std::string &text) { report_.warning(text); });
  t.set_snapshot_sink([this](const runtime::symbols::AddressSpace &space) {
    symbols_.runtime().add_snapshot(space);
  });
  if (verbose_)
    t.set_verbose([this](const std::string &line) { report_.info(line); });
  if (verbose_ && !t.agent_placement().empty())
    report_.info("process " + std::to_string(t.pid()) + " found the agent " +
                 t.agent_placement());
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
  // System-wide, the processes are taken on from start(): after the begin
  // probes, as bpftrace's begin runs before its other probes attach (a
  // hit before it would land in maps that begin then sets).
  if (system_wide_) {
    size_t sampled = 0;
    if (sampler_) {
      auto n = sampler_->attach();
      if (!n)
        return n;
      sampled = *n;
    }
    return probes_ + sampled;
  }
  for (auto &t : targets_) {
    std::vector<int> others;
    for (const auto &o : targets_)
      if (o.target != t.target)
        others.push_back(o.target->pid());
    t.target->set_siblings(std::move(others));
  }
  size_t most = 0;
  std::string first_error;
  for (auto it = targets_.begin(); it != targets_.end();) {
    UserspaceTarget &t = *it->target;
    std::vector<std::string> warnings;
    auto hooked =
        t.install(warnings, bundle_, programs_, region_, probe_names_);
    for (const auto &w : warnings)
      report_.warning(who(*it) + w);
    // Where its uaddr() symbols are (publish_addresses): a process that
    // cannot tell is not traced.
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
    publish_addresses(*addresses);
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
  if (sampler_)
    sampler_->start();
  take_newcomers();
  for (auto &t : targets_) {
    // -c: the execve that started the command, which no agent saw.
    if (host_)
      replay_command_exec(bundle_, programs_, *t.target, *host_);
    if (auto ok = t.target->go(); !ok)
      return ok;
  }
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
    if (!first || !first->follows_with(token_) || p.pid <= 0)
      continue;
    ++adopted;
    adopt_follower(p.pid, std::move(p.channel));
    // Taking one on takes a while: the clock moves.
    now = now_ns();
  }
}

void UserspaceBackend::publish_addresses(const std::vector<uint64_t> &values) {
  // uaddr() symbols, after the Globals in the globals map's value: the
  // first process's (one value for every process).
  if (globals_ && !addresses_set_)
    std::copy(values.begin(), values.end(),
              reinterpret_cast<uint64_t *>(globals_ + 1));
  addresses_set_ = true;
}

void UserspaceBackend::keep_newcomer(std::unique_ptr<UserspaceTarget> t,
                                     size_t hooked, bool follower) {
  if (verbose_)
    report_.info(std::string(follower ? "following" : "tracing") + " process " +
                 std::to_string(t->pid()) + " (" + t->comm() +
                 "): " + std::to_string(hooked) + " sites hooked");
  Traced traced{std::move(t)};
  traced.follower = follower;
  traced.scouted = !follower;
  traced.taken_ns = now_ns();
  targets_.push_back(std::move(traced));
}

Result<size_t> UserspaceBackend::hook_newcomer(UserspaceTarget &t) {
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
    return hooked; // its agent unhooks as it is let go
  if (!t.jit_error().empty() && said_.insert(t.jit_error()).second)
    report_.warning("probes run interpreted: " + t.jit_error());
  if (!addresses_set_)
    if (auto addresses = t.symbol_addresses(bundle_.uaddrs))
      publish_addresses(*addresses);
  (void)symbols_.runtime().snapshot(t.pid());
  symbols_.set_traced(t.pid(), region_.fd());
  if (auto go = t.go(); !go)
    return make_error(go.error());
  return hooked;
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
  auto hooked = hook_newcomer(**adopted);
  if (!hooked)
    return fail(hooked.error());
  // The process it was before the exec is now this one.
  for (auto &o : targets_)
    if (o.target->pid() == pid)
      o.succeeded = true;
  ++followed_;
  keep_newcomer(std::move(*adopted), *hooked, /*follower=*/true);
}

void UserspaceBackend::take_newcomers() {
  if (!scout_)
    return;
  std::vector<pid_t> due = scout_->due(now_ns());
  // Every program just exec'd that may map a probed file is stopped
  // first (most likely in its loader, exec_hold.h), so that none runs on
  // unhooked while those before it are taken on; at most kMostWaiting
  // wait so, the others are held when their turn comes.
  std::map<pid_t, runtime::inject::ExecHold> waiting;
  for (pid_t pid : due)
    if (waiting.size() < kMostWaiting && scout_->fresh_exec(pid) &&
        scout_->may_map(pid))
      if (auto held = runtime::inject::ExecHold::seize(pid); held)
        waiting.emplace(pid, std::move(*held));
  for (pid_t pid : due) {
    auto traced =
        std::find_if(targets_.begin(), targets_.end(), [&](const Traced &t) {
          return !t.done && t.target->pid() == pid;
        });
    if (traced != targets_.end()) {
      // It exec'd since it was taken on: the old program's hooks went with
      // it, and the new one is looked at now.
      auto exec = scout_->exec_seen(pid);
      if (!exec || *exec < traced->taken_ns)
        continue;
      traced->done = true;
    }
    auto stat = read_proc_stat(pid);
    if (!stat || stat->state == 'Z' || stat->state == 'X')
      continue;
    uint64_t image = image_key(pid, stat->start_time);
    if (auto r = refused_.find(pid); r != refused_.end()) {
      // Passed over once: again only when it exec'd since (the same
      // program, maybe), or is another process of the same pid.
      auto exec = scout_->exec_seen(pid);
      if (r->second.image == image && !(exec && *exec > r->second.at_ns))
        continue;
      refused_.erase(r);
    }
    // A program just exec'd that may map a probed file is held through
    // its loader (its first system calls), and on until it is taken on
    // or passed over (exec_hold.h). The look below then sees its
    // libraries.
    std::optional<runtime::inject::ExecHold> hold;
    auto through_loader = [&](runtime::inject::ExecHold held) {
      auto past = held.run_past_loader(
          runtime::inject::Deadline(std::chrono::milliseconds(200)));
      if (past && *past)
        hold.emplace(std::move(held));
      else if (!past && verbose_)
        report_.info("process " + std::to_string(pid) + " (" +
                     process_comm(pid) + ") is not held: " + past.error());
    };
    if (auto w = waiting.find(pid); w != waiting.end()) {
      through_loader(std::move(w->second));
      waiting.erase(w);
    } else {
      // Listed by a rescan: it may have exec'd since the events were read
      // (the exec is told before the new program runs an instruction).
      if (!scout_->exec_seen(pid))
        scout_->read_events(now_ns());
      if (scout_->fresh_exec(pid) && scout_->may_map(pid))
        if (auto held = runtime::inject::ExecHold::seize(pid); held)
          through_loader(std::move(*held));
    }
    auto look = scout_->look(pid);
    if (!look) {
      // Another user's, or a more privileged one's: not ours to look at.
      if (::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0) {
        refused_[pid] = {image, now_ns()};
        ++system_unreadable_;
        if (verbose_)
          report_.info("process " + std::to_string(pid) + " (" +
                       process_comm(pid) +
                       ") is not looked at: " + look.error());
      }
      continue;
    }
    // A traced process's fork has its parent's hooks (and agent).
    if (look->inherited) {
      scout_->settled(pid);
      refused_[pid] = {image, now_ns()};
      continue;
    }
    // A program just exec'd is injected once its loader mapped glibc;
    // one whose loader is done without a probed file is not looked at
    // again before a rescan.
    if (!look->probed) {
      if (look->glibc)
        scout_->settled(pid);
      continue;
    }
    if (!look->glibc && scout_->exec_seen(pid))
      continue;
    scout_->settled(pid);
    // A process the user did not name is not put at risk: its agent's
    // socket() may be what its sandbox kills on.
    if (sandboxed_apart(seccomp_filters(std::to_string(pid)),
                        seccomp_filters_)) {
      refuse(pid, image,
             "it runs under a seccomp filter the trace does not (the agent's "
             "system calls may be forbidden there)");
      continue;
    }
    take_on(pid, image, std::move(hold));
  }
}

void UserspaceBackend::refuse(pid_t pid, uint64_t image,
                              const std::string &why) {
  refused_[pid] = {image, now_ns()};
  ++system_skipped_;
  if (verbose_)
    report_.info("process " + std::to_string(pid) + " (" + process_comm(pid) +
                 ") is not traced: " + why);
}

void UserspaceBackend::take_on(pid_t pid, uint64_t image,
                               std::optional<runtime::inject::ExecHold> hold) {
  // Lent to the injector at a call where it may be (safe_point.h), if it
  // makes one soon; else let go and injected as it runs.
  if (hold) {
    auto safe = hold->run_to_safe_entry(kSafeEntryBudget);
    if (!safe || !*safe) {
      if (verbose_)
        report_.info("process " + std::to_string(pid) + " (" +
                     process_comm(pid) + ") is not held: " +
                     (safe ? "no system call where it could be lent (last: " +
                                 hold->why_not() + ")"
                           : safe.error()));
      hold.reset();
    } else if (verbose_) {
      report_.info("process " + std::to_string(pid) + " (" + process_comm(pid) +
                   ") is held from its exec, at its system call " +
                   std::to_string(hold->entries()) + ": " + hold->where());
    }
  }
  auto injected = UserspaceTarget::attach(pid, agent_, hold ? &*hold : nullptr);
  if (!injected && hold && !runtime::inject::process_gone(pid)) {
    hold.reset();
    injected = UserspaceTarget::attach(pid, agent_);
  }
  // One that exec'd meanwhile is looked at anew (its exec is known).
  auto exec_meanwhile = [&] {
    auto stat = read_proc_stat(pid);
    return stat && image_key(pid, stat->start_time) != image;
  };
  if (!injected && exec_meanwhile())
    return;
  if (!injected)
    return refuse(pid, image, injected.error());
  auto hooked = hook_newcomer(**injected);
  bool held = hold && hold->held();
  hold.reset(); // its hooks are in: it runs on
  if (!hooked)
    return refuse(pid, image, hooked.error());
  ++system_traced_;
  system_held_ += held ? 1 : 0;
  keep_newcomer(std::move(*injected), *hooked, /*follower=*/false);
}

void UserspaceBackend::reattach_execs() {
  for (auto &t : targets_) {
    if (!t.reattach || t.done)
      continue;
    pid_t pid = t.target->pid();
    auto injected = UserspaceTarget::attach(pid, agent_);
    Result<size_t> hooked =
        injected ? hook_newcomer(**injected) : Result<size_t>(make_error(""));
    if (!injected || !hooked) {
      // Ended meanwhile: news() says so from the old target's watch.
      if (t.target->ended())
        continue;
      t.reattach = false;
      t.reattach_error = "the process exec'd " + process_comm(pid) +
                         ", which could not be traced: " +
                         (injected ? hooked.error() : injected.error());
      continue;
    }
    if (verbose_)
      report_.info("process " + std::to_string(pid) + " exec'd " +
                   (*injected)->comm() + ": traced on, " +
                   std::to_string(*hooked) + " sites hooked");
    // The program it was: its counters kept, its symbols read once more.
    t.target->collect_counters();
    const auto &old = t.target->agent_counters();
    retired_.insert(retired_.end(), old.begin(), old.end());
    refresh_symbols(t, true);
    t.target = std::move(*injected);
    t.reattach = false;
    t.gone_ns = 0;
    ++followed_;
  }
}

Result<void> UserspaceBackend::service() {
  if (sampler_)
    sampler_->drain();
  uint64_t now = now_ns();
  if (now - last_service_ns_ < kServicePeriodNs && scout_ &&
      scout_->told_at_exec()) {
    take_newcomers(); // the events' newcomers only
    return {};
  }
  last_service_ns_ = now;
  take_followers();
  take_newcomers();
  reattach_execs();
  std::string errors;
  for (auto &t : targets_) {
    if (t.done)
      continue;
    auto more = t.target->service();
    refresh_symbols(t, t.target->libraries_changed());
    // A follower's trouble (it died mid-request) retires it: no news.
    if (!more && !t.follower && !t.scouted)
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
    // System-wide, a process that ends or execs is simply done: the
    // program it exec'd is looked at anew (take_newcomers).
    if (t.scouted) {
      t.ended = target.ended().has_value();
      t.done = t.ended || target.agent_gone();
      continue;
    }
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
    // -p: an exec is followed (reattach_execs); until then, and if its
    // process ends meanwhile, the old target tells.
    if (attached_ && !listener_ && !t.reattach && t.reattach_error.empty() &&
        target.agent_gone() && !target.ended() && target.hung_up_by_exec()) {
      t.reattach = true;
      continue;
    }
    if (t.reattach) {
      if (!target.ended())
        continue;
      t.reattach = false;
      t.gone_said = true; // it ended: no word on its exec
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
      out.push_back(
          {TargetNews::Kind::AgentGone, target.pid(), target.comm(),
           t.reattach_error.empty() ? target.hangup_reason() : t.reattach_error,
           std::nullopt});
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
    if (!(it->follower || it->scouted) || !it->done) {
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
  // System-wide, the trace runs until exit() or Ctrl-C.
  if (system_wide_)
    return false;
  // Under --follow the command holds the trace: its followers are
  // detached when it ends, as bpftrace -c ends with the command.
  return std::all_of(targets_.begin(), targets_.end(),
                     [](const Traced &t) { return t.done || t.follower; });
}

void UserspaceBackend::detach() {
  if (verbose_ && followed_)
    report_.info("followed " + std::to_string(followed_) + " program" +
                 (followed_ == 1 ? "" : "s") + " through exec");
  if (verbose_ && scout_)
    report_.info("system-wide: traced " + std::to_string(system_traced_) +
                 " process" + (system_traced_ == 1 ? "" : "es") + " (" +
                 std::to_string(system_held_) + " held from their exec), " +
                 std::to_string(system_skipped_) + " not traced, " +
                 std::to_string(system_unreadable_) + " not looked at");
  if (sampler_)
    sampler_->detach();
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
  if (scout_) {
    all.emplace_back(kSystemWideSkipped, system_skipped_);
    all.emplace_back(kSystemWideUnreadable, system_unreadable_);
  }
  if (sampler_) {
    auto mine = sampler_->losses();
    all.insert(all.end(), mine.begin(), mine.end());
  }
  all.emplace_back(kLoaderReadUnkept, foreign_reads_unkept());
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
