// The GPU backend (backend.h): runs a bundle's kernel:/kernelret: probes in
// a process the user-space backend launched (-c) with the agent in it.
//
//   1. create(): compiles every GPU probe to PTX (gpu_program.h) with the
//      process's pid, uid and comm as constants, and makes the GPU channel,
//      a socketpair whose agent end attach() hands the user-space backend
//      (GpuBackendOptions::hand_channel), which passes it to the agent on
//      the first channel (agent::MsgType::GpuChannel) before Go. Nothing is
//      connected to by name: no other process can be the agent's peer (a
//      named socket could be bound, or answered, by anyone).
//   2. service() (the session's loop): takes the agent's greeting when the
//      target first loads CUDA code, sends it the GpuSetup, and passes the
//      agent's notices on (a module without PTX, a module that failed).
//   3. sync_maps() before maps are printed (print(), interval, the end of a
//      trace that stops before the target exits): the agent copies the
//      device maps into the shared-memory region and drains the device
//      events ring; the printer then reads them like CPU maps. When the
//      target exits on its own, the agent has already done this in its
//      exit and context-teardown hooks.
//   4. clear_map(): clear()/zero() of a map reach the device copy too.
//   5. detach(): the agent's last notices, and a notice when the target
//      never loaded CUDA code (the probes did not run).
//
// A map that both CPU and GPU probes update prints merged: the device's
// totals are one more slot of the map (the agent's read-back thread's), so
// counts, sums, histograms, averages, stats and min/max combine like
// per-CPU slots. A plain value map (`@x[k] = v`) written on both sides
// keeps whichever side wrote it last at the read-back.
#pragma once

#include "backends/backend.h"
#include "backends/gpu/gpu_program.h"
#include "runtime/agent/protocol.h"
#include "runtime/bundle.h"
#include "runtime/result.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::backends::gpu {

struct GpuBackendOptions {
  GpuCompileOptions compile;
  // The agent's notices (a module without PTX, ...), one line each.
  std::function<void(const std::string &)> notice;
  // Hands the agent's end of the GPU channel to the agent (the user-space
  // backend's UserspaceTarget::pass_gpu_channel), in attach().
  std::function<Result<void>(int fd)> hand_channel;
  // The session's probe names (ids of `probe`). A GPU attach point that
  // expands per kernel (probe_ids.h) appends its names; null: attach
  // points print as written.
  std::vector<std::string> *probe_names = nullptr;
  // How often the agent drains the device events ring while the target runs.
  uint32_t drain_interval_ms = 50;
  int request_timeout_ms = 30000;
};

class GpuBackend final : public Backend {
public:
  // GPU probes go into CUDA modules as the driver loads them: the process
  // must start under ubtrace (-c).
  static Result<void> check(const std::string &command);
  static Result<std::unique_ptr<GpuBackend>>
  create(const runtime::Bundle &bundle, int pid,
         const GpuBackendOptions &options = {});
  ~GpuBackend() override;

  BackendKind kind() const override { return BackendKind::Gpu; }
  // Hands the channel to the agent; its attach points (kernel:/kernelret:
  // probes) count as attached.
  Result<size_t> attach() override;
  // Non-blocking: sets up the agent once it greets, collects its notices.
  Result<void> service() override;
  // It fires only in a process the user-space backend traces.
  bool fires_later() const override { return false; }
  Result<void> sync_maps() override;
  void clear_map(uint32_t map, bool zero) override;
  void detach() override;
  // The printer's names of the kernels for func and probe.
  void prepare_printer(output::FormatContext &fmt) override;

  // The agent's end of the GPU channel, to pass to the agent; once sent,
  // agent_end_sent() closes this process's copy (so the channel's end is
  // seen when the agent's goes). attach() does both.
  int agent_end() const { return agent_end_; }
  void agent_end_sent();

  bool connected() const { return sock_ >= 0; }
  // The agent connected at some point (the target loaded CUDA code).
  bool ever_connected() const { return sock_ >= 0 || gone_; }

  Result<agent::GpuStatsMsg> stats();

  // Attach points (kernel:/kernelret: probes), for "Attached N probes".
  size_t attachments() const { return program_.attachments.size(); }
  const GpuProgram &program() const { return program_; }
  // What `func` of a GPU probe prints, by kernel id, for the kernels the
  // CLI found in the traced binaries (kernel_names.h): the printer's
  // FormatContext::gpu_kernel_names. Empty when no probe reads func or
  // probe.
  const std::map<uint64_t, std::string> &kernel_names() const {
    return kernel_names_;
  }
  // Names the kernels of a GpuKernels message (the agent instrumented them;
  // the CLI may not have seen their module at start-up).
  void learn_kernels(const std::vector<uint8_t> &names);
  // What `probe` prints for a late id (runtime::gpu::late_probe_id): the
  // attach point that matches the kernel the agent reported
  // (probe_ids.h's late_probe_name); "" for a kernel not reported yet.
  std::string late_probe_name(uint64_t id);

private:
  GpuBackend() = default;
  Result<std::vector<uint8_t>> request(const agent::Message &m);
  // A message the agent sent on its own: a notice, or kernel names.
  void take(const agent::Message &m);
  void notice(const std::string &text) const;
  void disconnect();

  GpuProgram program_;
  std::vector<runtime::ProbeSpec> probes_; // the bundle's, for late names
  KnownKernels kernels_;
  std::map<uint64_t, std::string> kernel_names_;
  std::map<uint64_t, std::string> mangled_; // every kernel named, by id
  std::map<uint64_t, std::string> late_names_;
  bool demangle_ = true; // config cpp_demangle
  GpuBackendOptions options_;
  int pid_ = 0;
  int pending_ = -1;   // our end, until the agent greets on it
  int agent_end_ = -1; // the agent's, until sent
  int sock_ = -1;
  bool gone_ = false; // the agent hung up (the target exited)
};

} // namespace ubtrace::backends::gpu
