#include "backends/gpu/gpu_backend.h"

#include "backends/gpu/probe_ids.h"
#include "backends/output/context.h"
#include "runtime/agent/gpu/gpu_wire.h"
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/symbols/binary_resolver.h"

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/socket.h>
#include <unistd.h>

namespace ubtrace::backends::gpu {

namespace {

// The traced process as GPU probes see it: pid, comm, uid and gid.
jit::NvptxHostInfo host_info(int pid) {
  jit::NvptxHostInfo host;
  host.pid = uint32_t(pid);
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::getline(comm, host.comm);
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Uid:", 0) == 0)
      host.uid = uint32_t(std::strtoul(line.c_str() + 4, nullptr, 10));
    if (line.rfind("Gid:", 0) == 0)
      host.gid = uint32_t(std::strtoul(line.c_str() + 4, nullptr, 10));
  }
  return host;
}

} // namespace

// The binaries whose kernels `probe` and `func` can name: each attach
// point's BIN, and the traced program itself for those that name none.
void find_kernels(const runtime::Bundle &bundle, int pid,
                  KnownKernels &kernels) {
  std::string exe;
  char buf[PATH_MAX];
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  if (ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1); n > 0)
    exe.assign(buf, size_t(n));
  for (const runtime::ProbeSpec &spec : bundle.probes) {
    if (!is_gpu_probe(spec))
      continue;
    std::string bin = resolve_binary(spec.target);
    if (bin.empty() || bin.find('*') != std::string::npos) {
      (void)kernels.add_binary(exe);
    } else if (runtime::symbols::looks_like_library(bin)) {
      // A library by name: the file the loader would find, if any (one
      // the program dlopen()s from elsewhere is named when it loads).
      runtime::symbols::BinaryResolveOptions options;
      options.pid = pid;
      if (auto found = runtime::symbols::resolve_binary(bin, options);
          found && !found->empty())
        (void)kernels.add_binary(found->front().path);
    } else {
      // A file we cannot read has no kernels to name until the agent
      // reports them.
      (void)kernels.add_binary(bin);
    }
  }
}

Result<void> GpuBackend::check(const std::string &command) {
  if (command.empty())
    return make_error(
        "GPU probes (kernel:, kernelret:) need a command to trace: use -c "
        "'CMD' (they are injected when the process loads its CUDA modules, "
        "which a running process (-p) has already done)");
  return {};
}

Result<std::unique_ptr<GpuBackend>>
GpuBackend::create(const runtime::Bundle &bundle, int pid,
                   const GpuBackendOptions &options) {
  std::unique_ptr<GpuBackend> b(new GpuBackend());
  b->options_ = options;
  b->pid_ = pid;
  GpuCompileOptions compile = options.compile;
  compile.nvptx.host = host_info(pid);
  if (!compile.kernels) {
    GpuBackend *self = b.get();
    compile.kernels = [self, &bundle, pid]() -> const KnownKernels * {
      find_kernels(bundle, pid, self->kernels_);
      return &self->kernels_;
    };
  }
  if (options.probe_names)
    compile.first_new_probe_id = options.probe_names->size();
  auto program = compile_gpu_program(bundle, compile);
  if (!program)
    return std::move(program).take_error();
  b->program_ = std::move(*program);
  if (options.probe_names)
    options.probe_names->insert(options.probe_names->end(),
                                b->program_.probe_names.begin(),
                                b->program_.probe_names.end());
  b->demangle_ = bundle.config.cpp_demangle;
  b->kernel_names_ = b->kernels_.printed_names(b->demangle_);
  for (const KnownKernel &k : b->kernels_.kernels())
    b->mangled_.emplace(k.id, k.mangled);
  b->probes_ = bundle.probes;
  b->options_.probe_names = nullptr; // the session's, not ours to keep

  // The channel is a socketpair: its agent end goes to the agent over the
  // first channel (agent_end()), so nobody else can be the agent's peer.
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return make_error(std::string("GPU channel: socketpair: ") +
                      std::strerror(errno));
  // GpuSetup carries the probes' PTX: more than the default buffer.
  int big = 8 << 20;
  setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  b->pending_ = pair[0];
  b->agent_end_ = pair[1];
  return b;
}

GpuBackend::~GpuBackend() {
  disconnect();
  for (int fd : {pending_, agent_end_})
    if (fd >= 0)
      close(fd);
}

Result<size_t> GpuBackend::attach() {
  if (options_.hand_channel)
    if (auto passed = options_.hand_channel(agent_end_); !passed)
      return std::move(passed).take_error();
  agent_end_sent();
  return attachments();
}

void GpuBackend::prepare_printer(output::FormatContext &fmt) {
  fmt.gpu_kernel_names = &kernel_names_;
  fmt.refresh_gpu_kernel_names = [this] { (void)service(); };
  // A late `probe` id: named once the agent has reported its kernel (read
  // what it sent since, once, when the kernel is new).
  fmt.name_unknown_probe = [this](uint64_t id) {
    std::string name = late_probe_name(id);
    if (name.empty()) {
      (void)service();
      name = late_probe_name(id);
    }
    return name;
  };
}

void GpuBackend::notice(const std::string &text) const {
  if (options_.notice)
    options_.notice(text);
}

void GpuBackend::agent_end_sent() {
  if (agent_end_ >= 0)
    close(agent_end_);
  agent_end_ = -1;
}

void GpuBackend::disconnect() {
  if (sock_ >= 0)
    close(sock_);
  sock_ = -1;
}

Result<std::vector<uint8_t>> GpuBackend::request(const agent::Message &m) {
  if (sock_ < 0)
    return make_error("the agent is not connected on the GPU channel");
  auto r = agent::request_reply(sock_, m, options_.request_timeout_ms,
                                [&](agent::Message &&n) { take(n); });
  if (!r) {
    gone_ = true;
    disconnect();
    return make_error("GPU channel: " + r.error());
  }
  agent::ReplyMsg reply{};
  r->read(reply);
  std::vector<uint8_t> rest(r->payload.begin() + sizeof reply,
                            r->payload.end());
  if (reply.status != 0)
    return make_error(rest.empty() ? "the agent refused a GPU request"
                                   : std::string(rest.begin(), rest.end()));
  return rest;
}

void GpuBackend::take(const agent::Message &m) {
  if (m.type == agent::MsgType::GpuNotice)
    notice(std::string(m.payload.begin(), m.payload.end()));
  if (m.type == agent::MsgType::GpuKernels)
    learn_kernels(m.payload);
}

Result<void> GpuBackend::service() {
  // The agent greets once the target first loads CUDA code.
  if (sock_ < 0 && !gone_ && pending_ >= 0) {
    auto hello = agent::recv_message(pending_, 0);
    if (!hello && hello.error() == agent::kChannelClosed) {
      gone_ = true; // the target exited without loading CUDA code
      close(pending_);
      pending_ = -1;
    } else if (hello) {
      if (hello->type != agent::MsgType::GpuHello)
        return make_error("the agent did not greet on the GPU channel");
      sock_ = pending_;
      pending_ = -1;
      agent::gpu::GpuSetup setup;
      setup.ptx = program_.ptx;
      setup.maps = program_.maps;
      setup.map_table_entries = program_.map_table_entries;
      setup.drain_interval_ms =
          program_.sends_events ? options_.drain_interval_ms : 0;
      for (const GpuAttachment &a : program_.attachments)
        setup.attachments.push_back({a.attachment, a.binary});
      agent::Message m{agent::MsgType::GpuSetup,
                       agent::gpu::encode_setup(setup), -1};
      if (auto r = request(m); !r)
        return make_error("the agent refused the GPU probes: " + r.error());
    }
  }
  // Notices the agent sent on its own (a bounded number per call: the
  // traced process could send them without end).
  for (int handled = 0; sock_ >= 0 && handled < 256; ++handled) {
    auto m = agent::recv_message(sock_, 0);
    if (!m) {
      if (m.error() == agent::kChannelClosed) {
        gone_ = true;
        disconnect();
      }
      break;
    }
    take(*m);
  }
  return {};
}

void GpuBackend::learn_kernels(const std::vector<uint8_t> &names) {
  size_t begin = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != 0)
      continue;
    std::string mangled(names.begin() + begin, names.begin() + i);
    begin = i + 1;
    if (mangled.empty())
      continue;
    uint64_t id = runtime::gpu::fnv1a64(mangled);
    kernel_names_.emplace(
        id,
        demangle_ ? runtime::gpu::kernel_names(mangled).signature : mangled);
    mangled_.emplace(id, mangled);
  }
}

std::string GpuBackend::late_probe_name(uint64_t id) {
  if (auto it = late_names_.find(id); it != late_names_.end())
    return it->second;
  // The id keeps the kernel id's low 32 bits: the first kernel whose id
  // has them (two kernels of one process sharing them is unlikely).
  for (const auto &[kernel, mangled] : mangled_) {
    if ((kernel & 0xffffffffull) != (id & 0xffffffffull))
      continue;
    std::string name =
        gpu::late_probe_name(probes_, program_.binaries, id, mangled);
    if (!name.empty())
      late_names_.emplace(id, name);
    return name;
  }
  return "";
}

Result<void> GpuBackend::sync_maps() {
  if (sock_ < 0)
    return {};
  auto r = request(agent::Message{agent::MsgType::GpuSync, {}, -1});
  if (!r && gone_)
    return {}; // the target exited meanwhile: its exit hook read back
  if (!r)
    return make_error("GPU maps were not read back: " + r.error());
  return {};
}

// A failure is not reported (nor was it ever): the region's copy is
// cleared regardless.
void GpuBackend::clear_map(uint32_t map, bool zero) {
  if (sock_ < 0)
    return;
  agent::GpuClearMsg c{map, zero ? 1u : 0u};
  (void)request(agent::Message::of(agent::MsgType::GpuClear, c));
}

void GpuBackend::detach() {
  (void)service();
  if (!ever_connected())
    notice("the traced program loaded no CUDA code through the driver: "
           "GPU probes did not run");
}

Result<agent::GpuStatsMsg> GpuBackend::stats() {
  auto r = request(agent::Message{agent::MsgType::GpuStats, {}, -1});
  if (!r)
    return std::move(r).take_error();
  agent::GpuStatsMsg s{};
  if (r->size() < sizeof s)
    return make_error("GPU channel: short statistics");
  std::memcpy(&s, r->data(), sizeof s);
  return s;
}

} // namespace ubtrace::backends::gpu
