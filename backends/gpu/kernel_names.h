// The CUDA kernels the CLI can name. A GPU probe's context carries only a
// kernel id (FNV-1a 64 of the mangled name, runtime/gpu/probe_abi.h):
// `func` stores it, and `probe` is picked by it on the device. The CLI
// reads the names from the fatbins of the binaries the probes attach to
// (kernel:BIN:..., and the traced program itself for kernel::...) before
// the target loads them, so it can name each kernel when it compiles
// `probe` and when it prints `func`. Only kernels with PTX count: the
// agent instruments nothing else (a SASS-only kernel runs unprobed).
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ubtrace::backends::gpu {

struct KnownKernel {
  std::string binary;  // the file whose fatbin holds it
  std::string mangled; // as the PTX names it
  uint64_t id = 0;     // runtime::gpu::fnv1a64(mangled)
};

class KnownKernels {
public:
  // Adds the kernels of every PTX entry of `path`'s fatbins (compressed or
  // not); a file read before adds nothing. Returns how many it added. A
  // file without fatbins is not an error (it has no kernels).
  Result<size_t> add_binary(const std::string &path);
  // One kernel of `binary`; false if it was known already.
  bool add(const std::string &binary, const std::string &mangled);

  // In the order they were added (each binary's in name order).
  const std::vector<KnownKernel> &kernels() const { return kernels_; }

  // What `func` prints for each kernel id: the demangled signature (as
  // bpftrace prints func of a C++ function) or, with `demangle` off
  // (config cpp_demangle = false), the mangled name.
  std::map<uint64_t, std::string> printed_names(bool demangle) const;

private:
  std::vector<KnownKernel> kernels_;
  std::set<std::pair<std::string, std::string>> seen_; // (binary, mangled)
  std::set<std::string> files_;                        // read already
};

} // namespace ubtrace::backends::gpu
