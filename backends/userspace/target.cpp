#include "backends/userspace/target.h"

#include "backends/backend.h"
#include "backends/reporter.h"
#include "backends/userspace/ifunc_placement.h"
#include "backends/userspace/probe_name_ids.h"
#include "runtime/abi.h"
#include "runtime/agent/named_values.h"
#include "runtime/agent/program_wire.h"
#include "runtime/agent/protocol.h"
#include "runtime/file_text.h"
#include "runtime/helpers/pid_view.h"
#include "runtime/hook/trap_safety.h"
#include "runtime/inject/channel.h"
#include "runtime/inject/command_line.h"
#include "runtime/inject/injector.h"
#include "runtime/inject/spawn.h"
#include "runtime/jit/remote_image.h"
#include "runtime/proc_stat.h"
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/binary_cache.h"
#include "runtime/symbols/binary_resolver.h"
#include "runtime/symbols/file_identity.h"
#include "runtime/symbols/library_names.h"
#include "runtime/symbols/probe_resolver.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <linux/perf_event.h>
#include <map>
#include <numeric>
#include <poll.h>
#include <set>
#include <unistd.h>
#include <unordered_map>

namespace ubtrace::backends {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// How long a command we started gets to end on SIGTERM at the end of the
// trace before it is killed.
constexpr std::chrono::milliseconds kTermGrace{500};

static std::string hex_address(uint64_t a) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

// The peer closed the channel (what it sent before is read first).
static bool channel_hung_up(int sock) {
  struct pollfd p = {sock, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

// Why a process's agent hung up, judged from /proc before it is reaped.
// Alive, its memory tells (an exit drops the memory before it closes the
// descriptors): the maps no longer where its agent mapped them means it
// exec'd (the agent's library alone tells nothing: the program it became
// loads it too); still there, that the program closed the agent's
// descriptors. Gone (a
// zombie keeps its stat until reaped): an exec if its name changed and
// the agent never said goodbye (it sends its counters from the exit
// path); else unknown, most likely its exit.
struct Hangup {
  std::string reason; // "" when it could not be told
  bool exec = false;
};

static Hangup judge_hangup(int pid, const std::string &comm,
                           uint64_t region_base, bool said_goodbye, bool follow,
                           const std::optional<std::string> &exec_said) {
  auto read = [pid](const char *what) {
    auto text = read_file("/proc/" + std::to_string(pid) + "/" + what);
    return text ? *text : std::string();
  };
  auto exec_text = [follow](const std::string &now) {
    return "the process exec'd " + now +
           (follow ? ", whose agent did not connect"
                   : ", which ubtrace does not follow");
  };
  std::string stat = read("stat");
  size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    // Reaped already: its agent said it was about to exec.
    if (exec_said && !said_goodbye)
      return {exec_text(exec_said->empty() ? "a program"
                                           : exec_said->substr(0, 15)),
              true};
    return {};
  }
  std::string now = stat.substr(open + 1, close - open - 1);
  std::string exec = exec_text(now);
  // Its agent stays out of a sandbox the tree made (cli_link.cpp).
  if (follow && sandboxed_apart(seccomp_filters(std::to_string(pid)),
                                seccomp_filters("self")))
    exec += ": it runs under a seccomp filter the trace did not start under";
  // The maps where the agent mapped them: the same program (a new one
  // maps the agent's library too, but the maps only once its agent
  // connected).
  std::string maps = "\n" + read("maps");
  if (maps.size() > 1) {
    char start[24];
    std::snprintf(start, sizeof start, "\n%llx-",
                  static_cast<unsigned long long>(region_base));
    if (region_base && maps.find(start) != std::string::npos)
      return {"the process closed the agent's descriptors", false};
    return {exec, true};
  }
  if ((now != comm || exec_said) && !said_goodbye)
    return {exec, true};
  return {};
}

static std::string busy_message(int pid) {
  return "process " + std::to_string(pid) +
         " is traced by another ubtrace already (one at a time per process)";
}

struct NativeCodeCache {
  uint64_t wanted_base = 0; // where the first agent mapped the region
  std::map<uint64_t, jit::RemoteObject> objects; // by the agent's base
};

std::shared_ptr<NativeCodeCache> make_native_code_cache() {
  return std::make_shared<NativeCodeCache>();
}

struct UserspaceTarget::Impl {
  std::optional<runtime::inject::SpawnedProcess> spawned;
  int sock = -1; // the agent channel
  int pid = 0;
  bool waiting = false; // a spawned command waits for Go
  // A command that ended in its loader, followed there (spawn.h's
  // follow_loader), before any agent ran: no channel; the probes run on
  // the calls it made (command_exec.h), then the trace ends with it.
  bool stillborn = false;
  bool detached = false;
  bool agent_gone = false; // the agent hung up (its channel is closed)
  std::chrono::steady_clock::time_point hung_up_at{};
  // Why, once looked at ("" when it could not be told).
  bool hangup_judged = false;
  std::string hangup_reason;
  bool hung_up_by_exec = false;
  uint64_t region_base = 0; // where the agent mapped the maps
  // The program it was about to exec, as its agent said (MsgType::Exec;
  // an exec that failed leaves it set: /proc tells while it lives).
  std::optional<std::string> exec_said;
  std::string comm;
  std::optional<ProcessWatch> watch; // -p: the process is not our child
  std::optional<ProcessEnd> end;
  std::vector<agent::Message> notices; // arrived while waiting for replies
  agent::NamedValues counters;         // the agent's, as last read
  bool counters_final = false;         // sent by the agent as it exited
  std::chrono::steady_clock::time_point counters_read{};

  // What install() and later library loads need.
  const runtime::Bundle *bundle = nullptr;
  const ProgramSet *programs = nullptr;
  ProbeNameIds name_ids; // over the session's list of probe names
  std::function<void(const std::string &)> verbose; // -v: a line per site
  std::function<void(const std::string &)> warn;    // a warning to print
  std::function<void(const runtime::symbols::AddressSpace &)> snapshot_sink;
  std::vector<uint32_t> region_map;
  std::map<std::string, uint32_t> program_ids; // section -> agent program id
  // Probes in libraries not loaded yet: hooked when they load.
  struct Pending {
    size_t spec;
    runtime::symbols::ResolvedProbe probe;
    bool many; // the attach point expanded to several probes
  };
  std::vector<Pending> pending;
  // Probes hooked now, where: a library unloaded takes them back to
  // pending (resync).
  struct Hooked {
    Pending probe;
    uint64_t address;
    uint32_t kind; // agent::HookKind
  };
  std::vector<Hooked> hooked_probes;
  // Probes attached: a USDT probe of several locations (or a function
  // hooked again in a reloaded library) is one, as bpftrace counts them.
  size_t hooked = 0;
  std::set<std::pair<size_t, std::string>> counted;
  bool watching = false; // the agent reports library loads
  bool libraries_changed = false;

  // Has the agent drop the hooks whose library went away (they go back to
  // pending), then hooks what is pending and mapped now.
  Result<void> resync();
  // `loaded`: the library whose load this follows ("" after an unload).
  Result<void> hook_pending(const std::string &loaded = "");
  Result<void> watch_libraries();
  // What is hooked where. An attach point hooks an address once (aliases,
  // an IFUNC and its implementation under one wildcard). Two attach points
  // of a block that name one function both fire, as in bpftrace; but one
  // that reaches an implementation only through an IFUNC (memcpy and
  // memmove share one) joins the block's hook there: each call runs the
  // block once.
  std::set<std::pair<size_t, uint64_t>> hooked_sites; // (spec, address)
  std::map<std::pair<std::string, uint64_t>, bool>
      block_sites; // (section, address) -> via an IFUNC
  bool already_hooked(size_t spec_index, const std::string &section,
                      uint64_t address, bool via_ifunc);
  std::shared_ptr<runtime::symbols::BinaryCache> binaries =
      std::make_shared<runtime::symbols::BinaryCache>();
  std::shared_ptr<NativeCodeCache> native_cache = make_native_code_cache();
  // IFUNCs of the attach point being installed that stay on their
  // resolvers (name, why): one warning per attach point.
  std::vector<std::pair<std::string, std::string>> unplaced_ifuncs;
  // Native code for each program (section -> entry address in the target).
  std::map<std::string, uint64_t> native_entries;
  std::string jit_error; // why programs run interpreted, when they do

  // Compiles every user-space program for this process, links the image
  // at memory the agent reserved and hands it over.
  Result<void> load_native(const runtime::Bundle &bundle,
                           uint64_t cli_region_base,
                           uint64_t agent_region_base);

  Result<uint32_t> program_for(const runtime::ProbeSpec &spec);
  // The id `probe` reads at one system call of a system call probe.
  uint64_t syscall_probe_id(size_t spec_index,
                            const runtime::SyscallSite &site);
  // What each user-space probe's attach point asks for (by bundle index),
  // resolved again as libraries load: the process may have confined
  // itself (chroot) since, or load another copy of a library named.
  std::map<size_t, runtime::symbols::AttachRequest> requests;
  std::unique_ptr<runtime::symbols::ProbeResolver> resolver;
  std::set<size_t> warned; // specs told about a copy they do not probe
  // Pending probes' attach points resolved anew and hooked where mapped.
  Result<void>
  resolve_pending_again(const runtime::symbols::AddressSpace &space);
  // A library was loaded (`path`, as the process names it): pending
  // probes of a library of that name that still wait are said once.
  void warn_other_copy(const std::string &path);
  // A probe left waiting on a program (not a library) that is not the one
  // the process runs: it fires only if the process loads that file, and a
  // program it execs is not traced. Said once per probe.
  void warn_not_its_program(const Pending &p);
  // The other processes traced in the same trace.
  std::vector<int> siblings;
  bool follow = false;            // set_follow()
  bool sampled_elsewhere = false; // set_sampled_elsewhere()
  // Hooks `probe` if its binary is mapped; false when it is not (yet).
  Result<bool> hook(size_t spec_index,
                    const runtime::symbols::ResolvedProbe &probe, bool many,
                    const runtime::symbols::AddressSpace &space);
  Result<void> sample(size_t spec_index);
  Result<void> trace_syscalls(size_t spec_index);
  Result<void> count_events(size_t spec_index);

  Result<void> hello() {
    auto m = agent::recv_message(sock, 10000);
    if (!m)
      return make_error("the agent in process " + std::to_string(pid) +
                        " did not answer: " + m.error());
    agent::HelloMsg h{};
    if (m->type != agent::MsgType::Hello || !m->read(h))
      return make_error("the agent spoke out of turn");
    if (h.version != agent::kProtocolVersion)
      return make_error("the agent speaks protocol " +
                        std::to_string(h.version) + ", this ubtrace " +
                        std::to_string(agent::kProtocolVersion) +
                        ": mixed installations?");
    if (h.busy)
      return make_error(busy_message(pid));
    waiting = h.waiting != 0;
    return {};
  }

  // A request whose reply carries data: the reply's payload after its
  // ReplyMsg. Notices that come first are kept for service().
  Result<std::vector<uint8_t>> call_for_payload(const agent::Message &m) {
    auto r = agent::request_reply(sock, m, 10000, [this](agent::Message &&n) {
      if (notices.size() < agent::kMaxQueuedNotices)
        notices.push_back(std::move(n));
    });
    if (!r)
      return make_error("agent channel: " + r.error());
    agent::ReplyMsg reply{};
    if (!r->read(reply) || reply.status != 0)
      return make_error("the agent refused a request");
    return std::vector<uint8_t>(r->payload.begin() + sizeof reply,
                                r->payload.end());
  }

  void refresh_counters() {
    if (counters_final || detached || agent_gone || end)
      return;
    if (auto p =
            call_for_payload(agent::Message{agent::MsgType::Stats, {}, -1}))
      counters = agent::read_named_values(*p);
    counters_read = std::chrono::steady_clock::now();
  }

  Result<uint64_t> call(const agent::Message &m) {
    std::string err;
    auto r = agent::request(sock, m, &err, 10000, &notices);
    if (!r)
      return make_error("agent channel: " + r.error());
    if (r->status != 0)
      return make_error(err.empty() ? "the agent refused a request" : err);
    return r->value;
  }
};

UserspaceTarget::UserspaceTarget(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)), pid_(impl_->pid) {}

UserspaceTarget::~UserspaceTarget() {
  detach();
  if (impl_->sock >= 0 && !impl_->spawned)
    close(impl_->sock);
  if (impl_->spawned) {
    // A command we started and that still runs ends with the trace (as
    // with bpftrace -c): SIGTERM first, so that it can clean up, then
    // SIGKILL if it is still there half a second later (it may ignore or block
    // SIGTERM, or wait for a child that does, as `unshare --fork` does).
    if (!impl_->end) {
      (void)impl_->spawned->kill(SIGTERM);
      auto st = impl_->spawned->wait_for(kTermGrace);
      if (st && !*st) {
        std::fprintf(stderr,
                     "WARNING: process %d (%s) did not end within %lld ms of "
                     "SIGTERM: killed\n",
                     static_cast<int>(pid_), impl_->comm.c_str(),
                     static_cast<long long>(kTermGrace.count()));
        (void)impl_->spawned->kill(SIGKILL);
      }
    }
    auto st = impl_->spawned->wait();
    (void)st;
  }
}

Result<std::string> find_agent_library() {
  if (const char *env = getenv("UBTRACE_AGENT"); env && *env)
    return std::string(env); // (empty: as if unset)
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return make_error("cannot find ubtrace's own path: " + ec.message());
  for (const fs::path &candidate :
       {self.parent_path() / "libubtrace_preload.so",
        self.parent_path().parent_path() / "lib" / "ubtrace" /
            "libubtrace_preload.so"}) {
    if (fs::exists(candidate, ec))
      return candidate.string();
  }
  return make_error("cannot find libubtrace_preload.so next to " +
                    self.string() +
                    " or in ../lib/ubtrace (set UBTRACE_AGENT)");
}

Result<std::unique_ptr<UserspaceTarget>>
UserspaceTarget::launch(const std::string &command, const std::string &agent,
                        const std::vector<std::string> &agent_env,
                        bool follow_loader, const CommandRedial &redial) {
  auto cmd = runtime::inject::split_command(command);
  if (!cmd)
    return make_error("-c: " + cmd.error());
  runtime::inject::SpawnOptions opts;
  opts.command = std::move(*cmd);
  opts.agent_path = agent;
  opts.agent_env = agent_env;
  opts.follow_loader = follow_loader;
  // A CLI that dies (even by SIGKILL) leaves the command running, untraced:
  // the agent sees its channel close and unhooks. A CLI that exits on its
  // own while the command runs terminates it (~UserspaceTarget).
  opts.terminate_with_cli = false;
  auto spawned = runtime::inject::spawn_with_agent(opts);
  if (!spawned)
    return std::move(spawned).take_error();
  auto impl = std::make_unique<Impl>();
  impl->pid = spawned->pid();
  impl->sock = spawned->channel().fd();
  impl->spawned.emplace(std::move(*spawned));
  auto spoke = impl->spawned->await_agent(10000ms);
  if (!spoke && redial.listener && impl->spawned->channel().closed()) {
    // Its end of the channel was closed before the agent ran: the agent
    // dials the listener instead, its first message the token.
    auto again = redial.listener->accept(
        impl->pid, runtime::inject::Deadline(10000ms), impl->spawned->pidfd());
    if (again) {
      auto first = agent::recv_message(again->fd(), 10000);
      if (first && first->follows_with(redial.token)) {
        impl->spawned->channel() = std::move(*again);
        impl->sock = impl->spawned->channel().fd();
        spoke = {};
      }
    }
  }
  if (!spoke && impl->spawned->exec_call().loader.ended) {
    const std::string &program = impl->spawned->exec_call().program;
    impl->comm = program.substr(program.rfind('/') + 1).substr(0, 15);
    impl->sock = -1;
    impl->stillborn = true;
    return std::unique_ptr<UserspaceTarget>(
        new UserspaceTarget(std::move(impl)));
  }
  if (!spoke)
    return make_error("the agent did not start in '" + command +
                      "': " + spoke.error());
  impl->comm = process_comm(impl->pid); // the program's, after its exec
  auto hi = impl->hello();
  if (!hi)
    return std::move(hi).take_error();
  return std::unique_ptr<UserspaceTarget>(new UserspaceTarget(std::move(impl)));
}

Result<std::unique_ptr<UserspaceTarget>>
UserspaceTarget::attach(int pid, const std::string &agent,
                        runtime::inject::ExecHold *hold) {
  // Watched from before the injection: its start time pins the process.
  std::optional<ProcessWatch> watch = ProcessWatch::open(pid);
  auto listener = runtime::inject::AgentListener::create_for(pid);
  if (!listener)
    return std::move(listener).take_error();
  runtime::inject::InjectOptions io;
  io.agent_path = agent;
  // The library may be loaded already (an earlier ubtrace traced this
  // process): the entry starts a session either way.
  io.entry_symbol = agent::kInjectEntry;
  io.entry_argument = listener->entry_argument();
  io.hold = hold;
  auto report = runtime::inject::inject_agent(pid, io);
  if (!report)
    return std::move(report).take_error();
  if (report->entry_result == agent::kInjectBusy)
    return make_error(busy_message(pid));
  if (report->entry_result != agent::kInjectStarted)
    return make_error(
        "the agent loaded into " + std::to_string(pid) +
        " could not connect back to ubtrace (" +
        runtime::inject::inject_entry_failure(report->entry_result) + ")");
  auto channel = listener->accept(pid, runtime::inject::Deadline(10000ms));
  if (!channel)
    return make_error("the agent loaded into " + std::to_string(pid) +
                      " did not connect: " + channel.error());
  auto t = adopt(pid, channel->release_fd().release(), agent, std::move(watch));
  if (t && report->agent_placement != "the same path")
    (*t)->placement_ = report->agent_placement;
  return t;
}

Result<std::unique_ptr<UserspaceTarget>>
UserspaceTarget::adopt(int pid, int sock, const std::string &agent,
                       std::optional<ProcessWatch> watch) {
  auto impl = std::make_unique<Impl>();
  impl->pid = pid;
  impl->sock = sock;
  impl->comm = process_comm(pid);
  impl->watch = watch ? std::move(*watch) : ProcessWatch::open(pid);
  // Owned from here: the destructor closes it.
  std::unique_ptr<UserspaceTarget> t(new UserspaceTarget(std::move(impl)));
  auto hi = t->impl_->hello();
  if (!hi)
    return std::move(hi).take_error();
  return t;
}

static agent::UsdtArgWire wire_arg(const runtime::symbols::UsdtArg &a) {
  using K = runtime::symbols::UsdtArg::Kind;
  agent::UsdtArgWire w{};
  w.size = a.size;
  w.is_signed = a.is_signed;
  w.reg = static_cast<uint8_t>(a.reg.reg);
  w.reg_width = a.reg.width;
  w.high_byte = a.reg.high_byte;
  w.scale = a.scale;
  switch (a.kind) {
  case K::Constant:
    w.kind = agent::UsdtArgWire::Constant;
    w.value = a.constant;
    break;
  case K::Register:
    w.kind = agent::UsdtArgWire::Register;
    break;
  case K::Memory:
    w.kind = agent::UsdtArgWire::Memory;
    w.has_base = a.has_base;
    if (a.index) {
      w.has_index = 1;
      w.index_reg = static_cast<uint8_t>(a.index->reg);
    }
    w.value = a.displacement;
    break;
  case K::Unavailable:
    w.kind = agent::UsdtArgWire::None;
    break;
  }
  return w;
}

Result<uint32_t>
UserspaceTarget::Impl::program_for(const runtime::ProbeSpec &spec) {
  if (auto it = program_ids.find(spec.section); it != program_ids.end())
    return it->second;
  const vm::VerifiedProgram *vp = programs->verified(spec.section);
  if (!vp)
    return make_error("BUG: no verified program for " + spec.section);
  agent::WireProgram wp{*vp, region_map};
  agent::Message m{agent::MsgType::Program, agent::encode_program(wp), -1};
  auto id = call(m);
  if (!id)
    return make_error("the agent refused the program of " + spec.name + ": " +
                      id.error());
  program_ids[spec.section] = static_cast<uint32_t>(*id);
  return static_cast<uint32_t>(*id);
}

bool UserspaceTarget::Impl::already_hooked(size_t spec_index,
                                           const std::string &section,
                                           uint64_t address, bool via_ifunc) {
  if (!hooked_sites.insert({spec_index, address}).second)
    return true;
  auto [it, fresh] = block_sites.try_emplace({section, address}, via_ifunc);
  if (fresh)
    return false;
  if (via_ifunc || it->second)
    return true;
  return false;
}

Result<bool> UserspaceTarget::Impl::hook(
    size_t spec_index, const runtime::symbols::ResolvedProbe &resolved,
    bool many, const runtime::symbols::AddressSpace &space) {
  const auto &spec = bundle->probes[spec_index];
  if (!space.runtime_address(resolved.binary, resolved.file_offset))
    return false;
  // An IFUNC goes where the process's calls go (ifunc_placement.h).
  std::string unplaced;
  const runtime::symbols::ResolvedProbe probe =
      place_ifunc(resolved, space, *binaries, unplaced);
  if (!unplaced.empty())
    unplaced_ifuncs.emplace_back(probe.function, unplaced);
  auto addr = space.runtime_address(probe.binary, probe.file_offset);
  if (!addr)
    return false;
  uint32_t kind = spec.kind == runtime::ProbeKind::Uretprobe
                      ? static_cast<uint32_t>(agent::HookKind::Return)
                      : static_cast<uint32_t>(agent::HookKind::Entry);
  // Found again (resolved anew after a load, an alias, an IFUNC): hooked
  // once.
  if (already_hooked(spec_index, spec.section, *addr,
                     resolved.ifunc && !probe.ifunc))
    return true;
  auto program = program_for(spec);
  if (!program)
    return std::move(program).take_error();
  // The function's start, for the hook's bounds and `func`.
  uint64_t func_ip = *addr - (probe.vaddr - probe.function_vaddr);
  uint64_t id = name_ids.of(spec_index, spec, many, probe.name);
  agent::HookMsg h{};
  h.address = *addr;
  h.func_start = func_ip;
  h.func_size = probe.function_size;
  h.probe_id = id;
  h.func_ip = func_ip;
  h.program = *program;
  if (auto it = native_entries.find(spec.section); it != native_entries.end())
    h.native_entry = it->second;
  h.kind = kind;
  if (spec.kind == runtime::ProbeKind::Uretprobe && spec.entry_args)
    h.flags |= agent::kHookEntryArgs;
  if (spec.kind == runtime::ProbeKind::Usdt) {
    if (!probe.usdt_args_error.empty())
      return make_error(probe.name + ": " + probe.usdt_args_error);
    h.usdt_nargs = std::min<uint32_t>(probe.usdt_args.size(), 12);
    for (uint32_t i = 0; i < h.usdt_nargs; i++)
      h.usdt_args[i] = wire_arg(probe.usdt_args[i]);
    if (probe.semaphore) {
      auto sem =
          space.runtime_address(probe.binary, probe.semaphore->file_offset);
      if (sem) {
        agent::SemaphoreMsg sm{*sem};
        if (auto r = call(agent::Message::of(agent::MsgType::Semaphore, sm));
            !r)
          return make_error(probe.name +
                            ": cannot enable its semaphore: " + r.error());
      }
    }
  }
  auto r = call(agent::Message::of(agent::MsgType::Hook, h));
  if (!r)
    return make_error("cannot hook " + probe.name + ": " + r.error());
  hooked_probes.push_back({{spec_index, probe, many}, *addr, kind});
  if (verbose)
    verbose("hooked " + probe.name + ": " + hex_address(*addr) +
            " in process " + std::to_string(pid) +
            (*r == 1   ? ", a jump"
             : *r == 2 ? ", a trap (int3: the function is too short for a jump)"
                       : "") +
            (h.native_entry ? ", native code" : ", interpreted"));
  if (counted.insert({spec_index, probe.name}).second)
    hooked++;
  return true;
}

// A profile probe: the agent samples every thread of the process.
Result<void> UserspaceTarget::Impl::sample(size_t spec_index) {
  const auto &spec = bundle->probes[spec_index];
  auto program = program_for(spec);
  if (!program)
    return std::move(program).take_error();
  agent::ProfileMsg p{};
  p.period_ns = spec.interval_ns;
  p.probe_id = spec_index;
  p.program = *program;
  if (auto it = native_entries.find(spec.section); it != native_entries.end())
    p.native_entry = it->second;
  auto r = call(agent::Message::of(agent::MsgType::Profile, p));
  if (!r)
    return make_error(at_place(spec.where, "cannot sample process " +
                                               std::to_string(pid) + " for " +
                                               spec.name + ": " + r.error()));
  uint32_t threads = static_cast<uint32_t>(*r);
  uint32_t blocked = static_cast<uint32_t>(*r >> 32);
  if (blocked && warn)
    warn(spec.name + ": " + std::to_string(blocked) + " of the " +
         std::to_string(threads + blocked) + " threads of process " +
         std::to_string(pid) +
         " block every signal (or the profiling one): they are not "
         "sampled");
  if (verbose)
    verbose("sampling " + std::to_string(threads) + " threads of process " +
            std::to_string(pid) + " for " + spec.name +
            (p.native_entry ? ", native code" : ", interpreted"));
  hooked++;
  return {};
}

// A software:/hardware: probe: a perf event of every thread, sampled in
// the thread (runtime/agent/perf_events.h).
Result<void> UserspaceTarget::Impl::count_events(size_t spec_index) {
  const auto &spec = bundle->probes[spec_index];
  auto program = program_for(spec);
  if (!program)
    return std::move(program).take_error();
  agent::PerfEventMsg p{};
  p.type = spec.perf_type;
  p.config = spec.perf_config;
  p.config1 = spec.perf_config1;
  p.config2 = spec.perf_config2;
  p.count = spec.interval_ns;
  // Probes of one event share it: its period divides all their counts.
  p.period = 0;
  for (const auto &other : bundle->probes)
    if (other.kind == runtime::ProbeKind::PerfEvent &&
        other.perf_type == spec.perf_type &&
        other.perf_config == spec.perf_config &&
        other.perf_config1 == spec.perf_config1 &&
        other.perf_config2 == spec.perf_config2 &&
        other.perf_in_kernel == spec.perf_in_kernel)
      p.period = std::gcd(p.period, other.interval_ns);
  p.in_kernel = spec.perf_in_kernel ? 1 : 0;
  p.probe_id = spec_index;
  p.program = *program;
  if (auto it = native_entries.find(spec.section); it != native_entries.end())
    p.native_entry = it->second;
  auto r = call(agent::Message::of(agent::MsgType::PerfEvent, p));
  const bool watch = spec.perf_type == PERF_TYPE_BREAKPOINT;
  if (!r)
    return make_error(
        at_place(spec.where, (watch ? "cannot watch " : "cannot count ") +
                                 spec.name + " in process " +
                                 std::to_string(pid) + ": " + r.error()));
  uint32_t threads = static_cast<uint32_t>(*r);
  if (verbose)
    verbose((watch ? "watching " : "counting ") + spec.name + " on " +
            std::to_string(threads) + " threads of process " +
            std::to_string(pid) +
            (p.native_entry ? ", native code" : ", interpreted"));
  hooked++;
  return {};
}

// A system call probe: the agent runs it at each of its events, in every
// thread (runtime/agent/syscalls.h).
Result<void> UserspaceTarget::Impl::trace_syscalls(size_t spec_index) {
  const auto &spec = bundle->probes[spec_index];
  auto program = program_for(spec);
  if (!program)
    return std::move(program).take_error();
  // Where each ctx argument slot comes from (ast/syscalls.h's sources):
  // x86-64's system call argument registers, the number, the result.
  static constexpr uint32_t kFrom[8] = {abi::kRdi,     abi::kRsi, abi::kRdx,
                                        abi::kR10,     abi::kR8,  abi::kR9,
                                        abi::kOrigRax, abi::kRax};
  uint32_t threads = 0, blocked = 0;
  for (const auto &site : spec.syscalls) {
    agent::SyscallMsg m{};
    m.probe_id = syscall_probe_id(spec_index, site);
    m.program = *program;
    m.nr = site.nr;
    m.exit = site.exit;
    if (auto it = native_entries.find(spec.section); it != native_entries.end())
      m.native_entry = it->second;
    m.nargs = static_cast<uint32_t>(
        std::min<size_t>(site.sources.size(), std::size(m.args)));
    for (uint32_t i = 0; i < m.nargs; i++) {
      auto &a = m.args[i];
      a.size = 8;
      if (site.sources[i] >= 0 && site.sources[i] < 8) {
        a.kind = agent::UsdtArgWire::Register;
        a.reg = static_cast<uint8_t>(kFrom[site.sources[i]] / 8);
      } else {
        a.kind = agent::UsdtArgWire::Constant;
      }
    }
    auto r = call(agent::Message::of(agent::MsgType::Syscall, m));
    if (!r)
      return make_error(at_place(spec.where, "cannot trace the system calls "
                                             "of process " +
                                                 std::to_string(pid) + " for " +
                                                 site.name + ": " + r.error()));
    threads = static_cast<uint32_t>(*r);
    blocked = std::max(blocked, static_cast<uint32_t>(*r >> 32));
  }
  if (blocked && warn)
    warn(spec.name + ": " + std::to_string(blocked) + " threads of process " +
         std::to_string(pid) +
         " block SIGSYS: their system calls are not traced");
  if (verbose)
    verbose("tracing the system calls of " + std::to_string(threads) +
            " threads of process " + std::to_string(pid) + " for " + spec.name);
  hooked++;
  return {};
}

Result<void> UserspaceTarget::Impl::load_native(const runtime::Bundle &bundle,
                                                uint64_t cli_region_base,
                                                uint64_t agent_region_base) {
  // The sections of user-space probes, each compiled once.
  std::vector<std::string> sections;
  for (const auto &p : bundle.probes)
    if (backend_for(p.kind) == BackendKind::Userspace &&
        std::find(sections.begin(), sections.end(), p.section) ==
            sections.end())
      sections.push_back(p.section);
  if (sections.empty())
    return {};
  std::vector<jit::RemoteProgram> progs;
  for (const auto &sec : sections) {
    const vm::VerifiedProgram *vp = programs->verified(sec);
    if (!vp)
      return make_error("BUG: no verified program for " + sec);
    std::string entry = "ubt_entry_" + std::to_string(progs.size());
    progs.push_back({vp, entry});
  }
  auto &objects = native_cache->objects;
  auto cached = objects.find(agent_region_base);
  if (cached == objects.end()) {
    auto maps = jit::rebase_maps(programs->bindings(), cli_region_base,
                                 agent_region_base);
    auto compiled = jit::compile_remote_object(progs, maps);
    if (!compiled)
      return make_error("JIT: " + compiled.error());
    cached = objects.emplace(agent_region_base, std::move(*compiled)).first;
  }
  const jit::RemoteObject *object = &cached->second;

  // The agent's helper addresses.
  auto listed =
      call_for_payload(agent::Message{agent::MsgType::Symbols, {}, -1});
  if (!listed)
    return std::move(listed).take_error();
  jit::SymbolTable symbols;
  for (auto &[name, address] : agent::read_named_values(*listed))
    symbols[name] = address;

  agent::AllocCodeMsg a{object->image_size, object->alignment};
  auto address = call(agent::Message::of(agent::MsgType::AllocCode, a));
  if (!address)
    return make_error("the agent cannot reserve code memory: " +
                      address.error());
  auto image = jit::link_remote_image(*object, *address, symbols);
  if (!image)
    return make_error("JIT link: " + image.error());
  agent::CodeMsg c{*address};
  agent::Message code = agent::Message::of(agent::MsgType::Code, c);
  code.payload.insert(code.payload.end(), image->bytes.begin(),
                      image->bytes.end());
  if (auto r = call(code); !r)
    return make_error("the agent refused the code: " + r.error());
  for (size_t i = 0; i < sections.size(); i++) {
    uint64_t off = image->offset_of(progs[i].entry);
    if (off != UINT64_MAX)
      native_entries[sections[i]] = *address + off;
  }
  return {};
}

std::optional<runtime::symbols::AttachRequest>
attach_request(const runtime::ProbeSpec &spec) {
  runtime::symbols::AttachRequest req;
  switch (spec.kind) {
  case runtime::ProbeKind::Uprobe:
    req.type = runtime::symbols::UserProbeType::Uprobe;
    break;
  case runtime::ProbeKind::Uretprobe:
    req.type = runtime::symbols::UserProbeType::Uretprobe;
    break;
  case runtime::ProbeKind::Usdt:
    req.type = runtime::symbols::UserProbeType::Usdt;
    break;
  default:
    return std::nullopt;
  }
  req.target = spec.target;
  req.function = spec.function;
  req.provider = spec.provider;
  req.cpp = spec.lang == "cpp";
  if (spec.has_offset)
    req.offset = spec.offset;
  if (spec.address)
    req.address = spec.address;
  return req;
}

Result<bool> judge_expansion(
    const runtime::ProbeSpec &spec, const runtime::symbols::AttachRequest &req,
    const Result<std::vector<runtime::symbols::ResolvedProbe>> &got,
    const runtime::symbols::ProbeResolver &resolver,
    runtime::MissingProbes missing_probes, std::vector<std::string> &warnings) {
  // Any failure but "nothing matched" (an unreadable binary, a refused
  // function) stops the trace; the resolver's errors name the binary and
  // function, as bpftrace's do.
  if (!got && !resolver.last_matched_nothing())
    return make_error(got.error());
  if (got && !got->empty())
    return true;
  // Nothing matched: bpftrace's words, at the attach point, and config
  // missing_probes (error, warn, ignore) decides.
  std::string missing =
      "No matches for " +
      std::string(runtime::symbols::user_probe_type_name(req.type)) + " " +
      spec.target + ":" + (spec.provider.empty() ? "" : spec.provider + ":") +
      spec.function;
  switch (missing_probes) {
  case runtime::MissingProbes::Error:
    return make_error(at_place(spec.where, missing + "."));
  case runtime::MissingProbes::Warn:
    warnings.push_back(at_place(spec.where, missing + ". Skipping."));
    break;
  case runtime::MissingProbes::Ignore:
    break;
  }
  return false;
}

Result<size_t> UserspaceTarget::install(std::vector<std::string> &warnings,
                                        const runtime::Bundle &bundle,
                                        const ProgramSet &programs,
                                        runtime::maps::Region &region,
                                        std::vector<std::string> &probe_names) {
  Impl &im = *impl_;
  im.bundle = &bundle;
  im.programs = &programs;
  im.name_ids.attach(&probe_names);
  if (im.stillborn) // what ran (its calls), as bpftrace counts them
    return size_t(std::count_if(
        bundle.probes.begin(), bundle.probes.end(),
        [](const auto &p) { return p.kind == runtime::ProbeKind::Syscall; }));
  // The maps region, by descriptor; where an earlier process mapped it,
  // if it is free here too (the native code is then that process's).
  agent::Message region_msg =
      agent::Message::of(agent::MsgType::Region, im.native_cache->wanted_base);
  region_msg.fd = region.fd();
  auto agent_base = im.call(region_msg);
  if (!agent_base)
    return make_error("cannot hand the maps to the agent: " +
                      agent_base.error());
  im.region_base = *agent_base;
  if (!im.native_cache->wanted_base)
    im.native_cache->wanted_base = *agent_base;
  // Our /proc, for the agent to read its own mappings through when the
  // process has none (chroot), and its threads' numbers as we see them
  // (runtime/helpers/pid_view.h); without it the agent uses its own.
  if (int procfs = ::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
      procfs >= 0) {
    agent::Message m = agent::Message::of(
        agent::MsgType::Procfs,
        uint8_t(runtime::helpers::in_initial_pid_namespace() ? 1 : 0));
    m.fd = procfs;
    (void)im.call(m);
    ::close(procfs);
  }
  // Native code for the probes (UBTRACE_INTERPRET=1 keeps the interpreter).
  const char *interpret = getenv("UBTRACE_INTERPRET");
  if (!interpret || std::string(interpret) == "0") {
    auto native = im.load_native(
        bundle, reinterpret_cast<uint64_t>(region.base()), *agent_base);
    if (!native)
      im.jit_error = native.error();
  }

  // Object map index -> region map index (the bundle's maps in order).
  for (const auto &def : programs.object().maps) {
    uint32_t index = 0;
    for (size_t i = 0; i < bundle.maps.size(); i++)
      if (bundle.maps[i].object_name == def.name)
        index = static_cast<uint32_t>(i);
    im.region_map.push_back(index);
  }

  auto space = runtime::symbols::AddressSpace::snapshot(im.pid);
  if (!space)
    return make_error("cannot read the mappings of " + std::to_string(im.pid) +
                      ": " + space.error());
  runtime::symbols::ProbeResolverOptions resolve;
  resolve.allow_zero_size = bundle.unsafe;
  resolve.allow_unresolved_address = bundle.unsafe;
  im.resolver =
      std::make_unique<runtime::symbols::ProbeResolver>(resolve, im.binaries);
  auto &resolver = *im.resolver;
  for (size_t pi = 0; pi < bundle.probes.size(); pi++) {
    const auto &spec = bundle.probes[pi];
    auto request = attach_request(spec);
    if (!request)
      continue;
    runtime::symbols::AttachRequest req = *request;
    req.pid = im.pid;
    im.requests[pi] = req;
    auto expanded = resolver.expand(req);
    for (auto &w : resolver.take_warnings())
      warnings.push_back(std::move(w));
    auto judged = judge_expansion(spec, req, expanded, resolver,
                                  bundle.config.missing_probes, warnings);
    if (!judged)
      return std::move(judged).take_error();
    if (!*judged)
      continue;
    bool many = expanded->size() > 1;
    // Highest address first: a site a few bytes below another (USDT
    // probes side by side) then sees it and takes an int3 instead of a
    // jump that would cover it.
    std::sort(
        expanded->begin(), expanded->end(), [](const auto &a, const auto &b) {
          return a.binary != b.binary ? a.binary < b.binary : a.vaddr > b.vaddr;
        });
    for (const auto &probe : *expanded) {
      auto done = im.hook(pi, probe, many, *space);
      // A site of a wildcard the agent would not patch without risking
      // the process (runtime/hook/trap_safety.h): skipped, said once.
      if (!done && many && runtime::hook::is_unsafe_site_error(done.error())) {
        warnings.push_back(done.error() + ", skipping probe");
        continue;
      }
      if (!done)
        return std::move(done).take_error();
      if (!*done)
        im.pending.push_back({pi, probe, many}); // a library loaded later
    }
    if (!im.unplaced_ifuncs.empty())
      warnings.push_back(
          unplaced_ifunc_warning(spec.name, im.pid, im.unplaced_ifuncs));
    im.unplaced_ifuncs.clear();
  }
  // Where the CLI's sampler runs them for every process, it runs them
  // for this one too.
  for (size_t pi = 0; !im.sampled_elsewhere && pi < bundle.probes.size(); pi++)
    if (bundle.probes[pi].kind == runtime::ProbeKind::Profile) {
      if (auto r = im.sample(pi); !r)
        return std::move(r).take_error();
    } else if (bundle.probes[pi].kind == runtime::ProbeKind::Syscall) {
      if (auto r = im.trace_syscalls(pi); !r)
        return std::move(r).take_error();
    } else if (bundle.probes[pi].kind == runtime::ProbeKind::PerfEvent) {
      if (auto r = im.count_events(pi); !r)
        return std::move(r).take_error();
    }
  for (const auto &p : im.pending)
    im.warn_not_its_program(p);
  if (!im.pending.empty())
    if (auto r = im.watch_libraries(); !r)
      return std::move(r).take_error();
  return im.hooked;
}

void UserspaceTarget::set_verbose(
    std::function<void(const std::string &)> sink) {
  impl_->verbose = std::move(sink);
}

void UserspaceTarget::set_siblings(std::vector<int> pids) {
  impl_->siblings = std::move(pids);
}

void UserspaceTarget::set_follow() {
  impl_->follow = true;
}

void UserspaceTarget::set_sampled_elsewhere() {
  impl_->sampled_elsewhere = true;
}

void UserspaceTarget::share_native_code(
    std::shared_ptr<NativeCodeCache> cache) {
  impl_->native_cache = std::move(cache);
}

void UserspaceTarget::share_binaries(
    std::shared_ptr<runtime::symbols::BinaryCache> cache) {
  impl_->binaries = std::move(cache);
}

void UserspaceTarget::set_warnings(
    std::function<void(const std::string &)> sink) {
  impl_->warn = std::move(sink);
}

Result<std::vector<uint64_t>> UserspaceTarget::symbol_addresses(
    const std::vector<runtime::UaddrSpec> &symbols) const {
  std::vector<uint64_t> out;
  if (symbols.empty())
    return out;
  if (impl_->stillborn) // nothing of it is left to be read
    return std::vector<uint64_t>(symbols.size(), 0);
  auto space = runtime::symbols::AddressSpace::snapshot(pid_);
  if (!space)
    return make_error("cannot read the mappings of " + std::to_string(pid_) +
                      ": " + space.error());
  runtime::symbols::BinaryResolveOptions ro;
  ro.pid = pid_;
  for (const auto &u : symbols) {
    std::string where =
        "uaddr(\"" + u.symbol + "\") in " +
        (u.binary.empty() ? std::string("the traced program") : u.binary);
    // A probe that names no binary (profile, tracepoint): the program,
    // through its /proc link (the mappings match it by inode).
    auto files = u.binary.empty()
                     ? Result<std::vector<runtime::symbols::ResolvedBinary>>(
                           std::vector<runtime::symbols::ResolvedBinary>{
                               {"/proc/" + std::to_string(pid_) + "/exe",
                                runtime::symbols::BinarySource::GivenPath}})
                     : runtime::symbols::resolve_binary(u.binary, ro);
    if (!files)
      return make_error(where + ": " + files.error());
    std::optional<uint64_t> address;
    for (const auto &f : *files) {
      auto bin = runtime::symbols::BinaryInfo::open(f.path);
      if (!bin)
        continue;
      const auto &table = (*bin)->symbols();
      const runtime::symbols::ElfSymbol *sym = table.object_named(u.symbol);
      if (!sym) {
        auto fns = table.functions_named(u.symbol);
        sym = fns.empty() ? nullptr : fns.front();
      }
      if (!sym)
        continue;
      auto bias = space->load_bias(f.path, (*bin)->elf());
      if (!bias)
        return make_error(where + ": " + f.path + " is not mapped in process " +
                          std::to_string(pid_));
      address = *bias + sym->vaddr;
      break;
    }
    if (!address)
      return make_error(where + ": no such symbol");
    out.push_back(*address);
  }
  return out;
}

Result<size_t> UserspaceTarget::service() {
  Impl &im = *impl_;
  if (im.detached || im.sock < 0)
    return size_t(0);
  size_t before = im.hooked;
  // Bounded: the traced process can write anything on the agent's channel,
  // as fast as it likes; the session loop must get back to its signals.
  for (int handled = 0; handled < 256; ++handled) {
    agent::Message m;
    if (!im.notices.empty()) {
      m = std::move(im.notices.front());
      im.notices.erase(im.notices.begin());
    } else {
      auto r = agent::recv_message(im.sock, 0);
      if (!r) {
        // Nothing now, or the agent hung up (all it sent is read).
        if (!im.agent_gone && channel_hung_up(im.sock))
          note_hangup(im);
        break;
      }
      m = std::move(*r);
    }
    if (m.type == agent::MsgType::Counters) {
      im.counters = agent::read_named_values(m.payload);
      im.counters_final = true;
      continue;
    }
    if (m.type == agent::MsgType::Exec) {
      im.exec_said.emplace(m.payload.begin(), m.payload.end());
      continue;
    }
    bool loaded = m.type == agent::MsgType::Library;
    if ((!loaded && m.type != agent::MsgType::Unloaded) || im.end)
      continue;
    im.libraries_changed = true;
    // After an unload what is gone is dropped first (the agent walks the
    // loader's list for it, under the loader's lock: not at every load,
    // where a load nested in a library constructor holds it), then what is
    // pending is hooked. A copy another thread loads in the old place
    // before the unload is told is hooked when it is.
    // Library and Unloaded: a u32 ticket (echoed in the answer), then
    // for Library the path.
    size_t ticket_end = std::min<size_t>(m.payload.size(), sizeof(uint32_t));
    std::string path(m.payload.begin() + ticket_end, m.payload.end());
    if (auto r = loaded ? im.hook_pending(path) : im.resync(); !r)
      return std::move(r).take_error();
    if (loaded)
      im.warn_other_copy(path);
    // The thread in dlopen (or dlclose) may go on.
    agent::Message done{loaded ? agent::MsgType::LibraryDone
                               : agent::MsgType::UnloadDone,
                        {m.payload.begin(), m.payload.begin() + ticket_end},
                        -1};
    if (auto r = im.call(done); !r)
      break;
  }
  if (std::chrono::steady_clock::now() - im.counters_read >= 250ms)
    im.refresh_counters();
  return im.hooked - before;
}

const agent::NamedValues &UserspaceTarget::agent_counters() const {
  return impl_->counters;
}

void UserspaceTarget::collect_counters() {
  Impl &im = *impl_;
  // What the agent sent before it went (its exit notice among it).
  (void)service();
  if (!ended())
    im.refresh_counters();
}

Result<void> UserspaceTarget::Impl::watch_libraries() {
  if (watching)
    return {};
  if (auto r = call(agent::Message{agent::MsgType::WatchLibraries, {}, -1}); !r)
    return make_error("cannot watch library loads: " + r.error());
  watching = true;
  return {};
}

Result<void> UserspaceTarget::Impl::hook_pending(const std::string &loaded) {
  if (pending.empty())
    return {};
  auto space = runtime::symbols::AddressSpace::snapshot(pid);
  if (!space)
    return {}; // gone: nothing more to hook
  if (snapshot_sink)
    snapshot_sink(*space);
  std::vector<Pending> still;
  for (auto &p : pending) {
    auto done = hook(p.spec, p.probe, p.many, *space);
    if (!done)
      return std::move(done).take_error();
    if (!*done)
      still.push_back(std::move(p));
  }
  pending = std::move(still);
  auto again = resolve_pending_again(*space);
  // No warning channel once the trace runs: -v says it.
  if (!unplaced_ifuncs.empty() && verbose)
    verbose(unplaced_ifunc_warning(loaded, pid, unplaced_ifuncs));
  unplaced_ifuncs.clear();
  return again;
}

Result<void> UserspaceTarget::Impl::resolve_pending_again(
    const runtime::symbols::AddressSpace &space) {
  std::set<size_t> specs;
  for (const auto &p : pending)
    specs.insert(p.spec);
  for (size_t spec : specs) {
    auto it = requests.find(spec);
    if (it == requests.end() || !resolver)
      continue;
    auto expanded = resolver->expand(it->second);
    if (!expanded)
      continue; // not there (yet)
    bool many = expanded->size() > 1;
    for (const auto &probe : *expanded)
      if (auto done = hook(spec, probe, many, space); !done)
        return std::move(done).take_error();
  }
  return {};
}

void UserspaceTarget::Impl::warn_not_its_program(const Pending &p) {
  namespace sym = runtime::symbols;
  const std::string &file = p.probe.binary;
  if (!warn || follow || warned.count(p.spec) || file.empty() ||
      sym::looks_like_library(sym::basename_of(file)))
    return;
  const std::string proc = "/proc/" + std::to_string(pid);
  std::error_code ec;
  // A confined process names files under its own root: not compared here.
  if (fs::read_symlink(proc + "/root", ec) != "/" || ec)
    return;
  auto want = sym::identify_file(file);
  auto runs_it = [&](int who) {
    auto runs = sym::identify_file("/proc/" + std::to_string(who) + "/exe");
    return !runs ||
           want->same_inode(runs->dev_major, runs->dev_minor, runs->inode);
  };
  if (!want || runs_it(pid))
    return;
  // Traced with others (-p A,B): a probe on the program of another is
  // meant for that one.
  for (int other : siblings)
    if (runs_it(other))
      return;
  warned.insert(p.spec);
  std::string exe = fs::read_symlink(proc + "/exe", ec).string();
  warn(bundle->probes[p.spec].name + ": process " + std::to_string(pid) +
       " runs " + (ec ? std::string("another program") : exe) + ", not " +
       file +
       ": the probe fires only if the process loads that file, or execs "
       "it");
}

void UserspaceTarget::Impl::warn_other_copy(const std::string &path) {
  std::string loaded = fs::path(path).filename().string();
  for (const auto &p : pending) {
    if (warned.count(p.spec) ||
        fs::path(p.probe.binary).filename().string() != loaded)
      continue;
    bool hooked_elsewhere = false;
    for (const auto &h : hooked_probes)
      hooked_elsewhere |= h.probe.spec == p.spec;
    if (hooked_elsewhere)
      continue;
    warned.insert(p.spec);
    if (warn)
      warn(bundle->probes[p.spec].name + ": process " + std::to_string(pid) +
           " loaded " + path + ", not " + p.probe.binary +
           " that the probe is for (another file): the probe waits for that "
           "one");
  }
}

Result<void> UserspaceTarget::Impl::resync() {
  auto listed =
      call_for_payload(agent::Message{agent::MsgType::Revalidate, {}, -1});
  if (!listed)
    return {}; // the agent is going: nothing to hook any more
  std::vector<agent::ForgottenHook> gone(listed->size() /
                                         sizeof(agent::ForgottenHook));
  if (!gone.empty())
    std::memcpy(gone.data(), listed->data(), gone.size() * sizeof gone[0]);
  for (const auto &g : gone) {
    std::vector<Hooked> kept;
    for (auto &h : hooked_probes) {
      if (h.address != g.address || h.kind != g.kind) {
        kept.push_back(std::move(h));
        continue;
      }
      if (verbose)
        verbose("unhooked " + h.probe.probe.name +
                ": its library was unloaded (hooked again "
                "when it loads)");
      // Hooked there no more: a copy loaded in the same place is hooked anew.
      hooked_sites.erase({h.probe.spec, h.address});
      block_sites.erase({bundle->probes[h.probe.spec].section, h.address});
      pending.push_back(std::move(h.probe));
    }
    hooked_probes = std::move(kept);
  }
  if (!pending.empty())
    if (auto r = watch_libraries(); !r)
      return r;
  return hook_pending();
}

size_t UserspaceTarget::pending() const {
  return impl_->pending.size();
}

void UserspaceTarget::set_snapshot_sink(
    std::function<void(const runtime::symbols::AddressSpace &)> sink) {
  impl_->snapshot_sink = std::move(sink);
}

bool UserspaceTarget::libraries_changed() {
  return std::exchange(impl_->libraries_changed, false);
}

const std::string &UserspaceTarget::jit_error() const {
  return impl_->jit_error;
}

Result<void> UserspaceTarget::pass_gpu_channel(int fd) {
  if (impl_->stillborn)
    return {};
  auto r = impl_->call(agent::Message{agent::MsgType::GpuChannel, {}, fd});
  if (!r)
    return make_error("cannot hand the GPU channel to the agent: " + r.error());
  return {};
}

const runtime::inject::ExecCall *UserspaceTarget::exec_call() const {
  return impl_->spawned ? &impl_->spawned->exec_call() : nullptr;
}

uint64_t UserspaceTarget::syscall_probe_id(size_t spec_index,
                                           const runtime::SyscallSite &site) {
  return impl_->syscall_probe_id(spec_index, site);
}

uint64_t
UserspaceTarget::Impl::syscall_probe_id(size_t spec_index,
                                        const runtime::SyscallSite &site) {
  return name_ids.of(spec_index, bundle->probes[spec_index], site);
}

Result<void> UserspaceTarget::go() {
  if (!impl_->waiting)
    return {};
  impl_->waiting = false;
  auto r = impl_->call(agent::Message{agent::MsgType::Go, {}, -1});
  if (!r)
    return std::move(r).take_error();
  return {};
}

void UserspaceTarget::note_hangup(Impl &im) {
  im.agent_gone = true;
  im.hung_up_at = std::chrono::steady_clock::now();
  if (im.hangup_judged)
    return;
  im.hangup_judged = true;
  // What it sent before it hung up, kept for service(): its goodbye is
  // among them if it exited.
  for (int n = 0; n < 4096; ++n) {
    auto r = agent::recv_message(im.sock, 0);
    if (!r)
      break;
    im.notices.push_back(std::move(*r));
  }
  bool goodbye = im.counters_final;
  for (const auto &m : im.notices) {
    goodbye = goodbye || m.type == agent::MsgType::Counters;
    if (m.type == agent::MsgType::Exec)
      im.exec_said.emplace(m.payload.begin(), m.payload.end());
  }
  Hangup h = judge_hangup(im.pid, im.comm, im.region_base, goodbye, im.follow,
                          im.exec_said);
  im.hangup_reason = std::move(h.reason);
  im.hung_up_by_exec = h.exec;
}

std::optional<ProcessEnd> UserspaceTarget::ended() {
  Impl &im = *impl_;
  if (im.end)
    return im.end;
  // Judged before the process is reaped: an exec'd program that ends at
  // once still says so. What the agent sent last (its Exec notice) is
  // taken first, for service() to handle: a channel with a message
  // queued does not read as hung up, and the process would be reaped
  // unjudged.
  if (!im.agent_gone && !im.detached && im.sock >= 0) {
    for (int n = 0; n < 4096; ++n) {
      auto r = agent::recv_message(im.sock, 0);
      if (!r)
        break;
      im.notices.push_back(std::move(*r));
    }
    if (channel_hung_up(im.sock))
      note_hangup(im);
  }
  if (im.spawned) {
    auto st = im.spawned->try_wait();
    if (st && *st)
      im.end = ProcessEnd{im.pid, im.comm, **st};
  } else if (im.watch) {
    im.end = im.watch->poll();
  }
  return im.end;
}

bool UserspaceTarget::agent_gone() {
  // A process that dies closes its files a moment before it can be seen
  // to have ended: a hangup counts once that moment has passed with the
  // process alive.
  if (!impl_->agent_gone)
    return false;
  if (!impl_->hangup_reason.empty())
    return true; // not its exit: said even if the process ended since
  return !ended() &&
         std::chrono::steady_clock::now() - impl_->hung_up_at >= 500ms;
}

const std::string &UserspaceTarget::hangup_reason() const {
  return impl_->hangup_reason;
}

bool UserspaceTarget::hung_up_by_exec() const {
  return impl_->hung_up_by_exec;
}

const std::string &UserspaceTarget::comm() const {
  return impl_->comm;
}

void UserspaceTarget::detach() {
  if (impl_->detached || impl_->sock < 0)
    return;
  impl_->detached = true;
  if (!ended() && !impl_->agent_gone)
    (void)impl_->call(agent::Message{agent::MsgType::Detach, {}, -1});
}

} // namespace ubtrace::backends
