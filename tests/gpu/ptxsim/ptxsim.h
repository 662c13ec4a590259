// ptxsim: a PTX interpreter that runs CUDA kernels on the host, thread by
// thread, with real warp semantics for the collectives probes use
// (activemask, match, shfl, vote, redux, bar.warp.sync) and block barriers.
// It lets CI prove that PTX ubtrace injected computes the right thing on a
// machine without a GPU: the CUDA driver stand-in runs launched kernels
// through it.
//
// Memory model: every address is a host address ("device memory" is host
// memory), cvta is the identity, .local is per-thread host memory, .shared
// per block, .param of an entry a per-launch buffer built from kernelParams.
// A load or store below 65536 is an error that ends the launch.
#pragma once

#include "runtime/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ubtrace::ptxsim {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// One parameter of an .entry, from its signature.
struct KernelParam {
  uint32_t size = 0;
  uint32_t align = 0;
};

struct LaunchOptions {
  uint32_t sm_count = 132; // %smid = linear block index % sm_count
  unsigned host_threads =
      0; // blocks run on this many OS threads; 0: min(hw, 4)
  // Device printf (vprintf): the formatted text; unset: stdout (fwrite+fflush).
  std::function<void(std::string_view)> printf_sink;
  // 0: unlimited; else a launch that runs more instructions fails (a hang
  // ends instead of spinning forever).
  uint64_t max_instructions = 0;
};

struct LaunchStats {
  uint64_t instructions = 0;
  uint64_t threads = 0;
};

struct ModuleImpl; // the decoded module (ir.h)

class Module {
public:
  // Parses a whole PTX module (as the driver would get it). Unsupported
  // opcode or syntax: an error naming the line number and the text. Module
  // variables (.global/.const) are allocated at load and live with the Module.
  static Result<std::unique_ptr<Module>> load(std::string_view ptx);
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  std::vector<std::string> kernels() const; // .entry names, in module order
  Result<std::vector<KernelParam>> params(std::string_view kernel) const;
  // A module-scope variable (.global / .const): host address and size.
  Result<std::pair<void *, size_t>> global(std::string_view name) const;
  // Runs `kernel` to completion on grid x block threads. params[i] points to
  // the value of parameter i (CUDA's kernelParams; sizes from params()).
  // Safe to call from several host threads at once.
  Result<LaunchStats> launch(std::string_view kernel, Dim3 grid, Dim3 block,
                             uint32_t dynamic_shared_bytes, void *const *params,
                             const LaunchOptions &options = {}) const;

private:
  explicit Module(std::unique_ptr<ModuleImpl> impl);
  std::unique_ptr<ModuleImpl> impl_;
};

} // namespace ubtrace::ptxsim
