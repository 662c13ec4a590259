#include "tests/unit/session/agent_session.h"

#include "runtime/agent/program_wire.h"
#include "runtime/inject/channel.h"
#include "runtime/inject/injector.h"
#include "runtime/jit/remote_image.h"
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/probe_resolver.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <unistd.h>

namespace ubtrace::session_test {

using namespace std::chrono_literals;

constexpr int kReplyTimeoutMs = 10000;

Result<uint64_t> AgentSession::call(const agent::Message &m) {
  std::string err;
  std::vector<agent::Message> notices; // none expected: no library watch
  auto r = agent::request(sock_, m, &err, kReplyTimeoutMs, &notices);
  if (!r)
    return make_error("agent channel: " + r.error());
  if (r->status != 0)
    return make_error(err.empty() ? "the agent refused a request" : err);
  return r->value;
}

Result<AgentSession> AgentSession::open(pid_t pid,
                                        const std::string &agent_library,
                                        const runtime::Bundle &bundle,
                                        const backends::ProgramSet &programs,
                                        runtime::maps::Region &region) {
  auto listener = runtime::inject::AgentListener::create_for(pid);
  if (!listener)
    return std::move(listener).take_error();
  runtime::inject::InjectOptions io;
  io.agent_path = agent_library;
  io.entry_symbol = agent::kInjectEntry;
  io.entry_argument = listener->entry_argument();
  auto report = runtime::inject::inject_agent(pid, io);
  if (!report)
    return make_error("inject: " + report.error());
  if (report->entry_result != 0)
    return make_error(
        "the agent's entry returned " + std::to_string(report->entry_result) +
        (report->entry_result == 1 ? " (busy: a session still runs)" : ""));
  auto channel = listener->accept(pid, runtime::inject::Deadline(10000ms));
  if (!channel)
    return make_error("the agent did not connect: " + channel.error());
  AgentSession s;
  s.pid_ = pid;
  s.sock_ = channel->release_fd().release();

  auto hello = agent::recv_message(s.sock_, kReplyTimeoutMs);
  if (!hello)
    return make_error("no Hello: " + hello.error());
  agent::HelloMsg h{};
  if (hello->type != agent::MsgType::Hello || !hello->read(h))
    return make_error("the agent spoke out of turn");
  if (h.version != agent::kProtocolVersion || h.busy)
    return make_error("the agent is busy or speaks another protocol");

  auto agent_base =
      s.call(agent::Message{agent::MsgType::Region, {}, region.fd()});
  if (!agent_base)
    return make_error("Region: " + agent_base.error());
  if (auto native =
          s.load_native(bundle, programs,
                        reinterpret_cast<uint64_t>(region.base()), *agent_base);
      !native)
    return std::move(native).take_error();
  // Object map index -> region map index (the bundle's maps in order).
  std::vector<uint32_t> region_map;
  for (const auto &def : programs.object().maps) {
    uint32_t index = 0;
    for (size_t i = 0; i < bundle.maps.size(); i++)
      if (bundle.maps[i].object_name == def.name)
        index = static_cast<uint32_t>(i);
    region_map.push_back(index);
  }

  auto space = runtime::symbols::AddressSpace::snapshot(pid);
  if (!space)
    return make_error("mappings: " + space.error());
  runtime::symbols::ProbeResolver resolver;
  std::map<std::string, uint32_t> program_ids;
  for (size_t pi = 0; pi < bundle.probes.size(); pi++) {
    const auto &spec = bundle.probes[pi];
    if (spec.kind != runtime::ProbeKind::Uprobe &&
        spec.kind != runtime::ProbeKind::Uretprobe)
      continue;
    runtime::symbols::AttachRequest req;
    req.type = spec.kind == runtime::ProbeKind::Uprobe
                   ? runtime::symbols::UserProbeType::Uprobe
                   : runtime::symbols::UserProbeType::Uretprobe;
    req.target = spec.target;
    req.function = spec.function;
    req.pid = pid;
    auto expanded = resolver.expand(req);
    if (!expanded || expanded->size() != 1)
      return make_error(spec.name + ": " +
                        (expanded ? "expected one probe" : expanded.error()));
    const auto &probe = expanded->front();
    auto addr = space->runtime_address(probe.binary, probe.file_offset);
    if (!addr)
      return make_error(spec.name + ": not mapped in the process");
    if (!program_ids.count(spec.section)) {
      const vm::VerifiedProgram *vp = programs.verified(spec.section);
      if (!vp)
        return make_error("no verified program for " + spec.section);
      agent::WireProgram wp{*vp, region_map};
      auto id = s.call(agent::Message{agent::MsgType::Program,
                                      agent::encode_program(wp), -1});
      if (!id)
        return make_error("Program: " + id.error());
      program_ids[spec.section] = static_cast<uint32_t>(*id);
    }
    agent::HookMsg hm{};
    hm.address = *addr;
    hm.func_start = *addr - (probe.vaddr - probe.function_vaddr);
    hm.func_size = probe.function_size;
    hm.probe_id = pi;
    hm.func_ip = hm.func_start;
    hm.program = program_ids[spec.section];
    hm.kind = static_cast<uint32_t>(spec.kind == runtime::ProbeKind::Uretprobe
                                        ? agent::HookKind::Return
                                        : agent::HookKind::Entry);
    s.hooks_.push_back(hm);
  }
  // Native entries, by section, into the hook requests.
  for (auto &hm : s.hooks_)
    for (const auto &[section, id] : program_ids)
      if (id == hm.program)
        hm.native_entry =
            s.native_entries_.count(section) ? s.native_entries_[section] : 0;
  return s;
}

Result<void> AgentSession::load_native(const runtime::Bundle &bundle,
                                       const backends::ProgramSet &programs,
                                       uint64_t cli_region_base,
                                       uint64_t agent_region_base) {
  std::vector<std::string> sections;
  for (const auto &p : bundle.probes)
    if ((p.kind == runtime::ProbeKind::Uprobe ||
         p.kind == runtime::ProbeKind::Uretprobe) &&
        std::find(sections.begin(), sections.end(), p.section) ==
            sections.end())
      sections.push_back(p.section);
  std::vector<jit::RemoteProgram> progs;
  for (const auto &sec : sections) {
    const vm::VerifiedProgram *vp = programs.verified(sec);
    if (!vp)
      return make_error("no verified program for " + sec);
    progs.push_back({vp, "ubt_entry_" + std::to_string(progs.size())});
  }
  auto maps =
      jit::rebase_maps(programs.bindings(), cli_region_base, agent_region_base);
  auto object = jit::compile_remote_object(progs, maps);
  if (!object)
    return make_error("JIT: " + object.error());

  // The agent's helper addresses: a Reply with (u32 length, name, u64
  // address) entries after the ReplyMsg.
  if (auto sent = agent::send_message(
          sock_, agent::Message{agent::MsgType::Symbols, {}, -1});
      !sent)
    return std::move(sent).take_error();
  auto r = agent::recv_message(sock_, kReplyTimeoutMs);
  if (!r || r->type != agent::MsgType::Reply)
    return make_error("no reply to Symbols");
  jit::SymbolTable symbols;
  const auto &p = r->payload;
  for (size_t at = sizeof(agent::ReplyMsg); at + 4 <= p.size();) {
    uint32_t len;
    std::memcpy(&len, p.data() + at, 4);
    if (at + 4 + len + 8 > p.size())
      break;
    uint64_t addr;
    std::memcpy(&addr, p.data() + at + 4 + len, 8);
    symbols[std::string(reinterpret_cast<const char *>(p.data() + at + 4),
                        len)] = addr;
    at += 4 + len + 8;
  }

  agent::AllocCodeMsg a{object->image_size, object->alignment};
  auto address = call(agent::Message::of(agent::MsgType::AllocCode, a));
  if (!address)
    return make_error("AllocCode: " + address.error());
  auto image = jit::link_remote_image(*object, *address, symbols);
  if (!image)
    return make_error("JIT link: " + image.error());
  agent::Message code =
      agent::Message::of(agent::MsgType::Code, agent::CodeMsg{*address});
  code.payload.insert(code.payload.end(), image->bytes.begin(),
                      image->bytes.end());
  if (auto done = call(code); !done)
    return make_error("Code: " + done.error());
  for (size_t i = 0; i < sections.size(); i++) {
    uint64_t off = image->offset_of(progs[i].entry);
    if (off == UINT64_MAX)
      return make_error("no native entry for " + sections[i]);
    native_entries_[sections[i]] = *address + off;
  }
  return {};
}

Result<AgentSession::Hooked> AgentSession::hook_all() {
  Hooked hooked;
  for (const auto &hm : hooks_) {
    auto mode = call(agent::Message::of(agent::MsgType::Hook, hm));
    if (!mode)
      return make_error("Hook at " + std::to_string(hm.address) + ": " +
                        mode.error());
    if (*mode == 1)
      hooked.jumps++;
    else if (*mode == 2)
      hooked.traps++;
    else
      return make_error("the agent did not say how it hooked " +
                        std::to_string(hm.address));
  }
  return hooked;
}

Result<void> AgentSession::detach() {
  auto r = call(agent::Message{agent::MsgType::Detach, {}, -1});
  if (!r)
    return std::move(r).take_error();
  return {};
}

void AgentSession::close() {
  if (sock_ >= 0)
    ::close(sock_);
  sock_ = -1;
}

AgentSession::AgentSession(AgentSession &&o) noexcept
    : sock_(o.sock_), pid_(o.pid_), hooks_(std::move(o.hooks_)),
      native_entries_(std::move(o.native_entries_)) {
  o.sock_ = -1;
}

AgentSession::~AgentSession() {
  close();
}

} // namespace ubtrace::session_test
