// Injecting probe calls into the kernels of a PTX module.
//
// At kernel entry the calls go where the body's code starts (after its
// register declarations, before its first instruction or label, so a loop
// head at the top does not re-run them); the probe gets the kernel's
// parameter values explicitly in its context block (probe_abi.h), loaded
// from parameter space by the injected code, so nothing depends on where
// the kernel itself loads them. At exit the calls go before every `ret` and
// `exit` of the kernel's body, nested blocks included; a guarded
// `@%p ret;` gets guarded calls `@%p call ...`, so probes fire only on the
// path that leaves. Each call site is a `{ }` scope with its own register
// and parameter declarations: nothing of the kernel's is renamed or reused.
// One `.local` context block per kernel, declared at the top of its body.
#pragma once

#include "runtime/gpu/ptx_module.h"

#include <string>
#include <utility>
#include <vector>

namespace ubtrace::runtime::gpu {

enum class ProbeSite : uint8_t {
  Entry, // kernel:BIN:NAME
  Exit,  // kernelret:BIN:NAME
};

struct ProbeAttachment {
  ProbeSite site = ProbeSite::Entry;
  std::string kernel_pattern; // mangled or demangled, `*` wildcards
  std::string function;       // the probe .func, as named in the probe PTX
  uint64_t arg_mask = ~uint64_t{0}; // parameters to put in the context
};

struct ProbeProgram {
  std::string ptx; // probe functions, globals (e.g. device maps), externs
  std::vector<ProbeAttachment> attachments;
};

struct InstrumentedKernel {
  std::string name;         // mangled, as in the module
  uint64_t kernel_id = 0;   // fnv1a64(name): what the context block holds
  uint32_t entry_calls = 0; // probe calls placed at entry
  uint32_t exit_sites = 0;  // ret/exit statements instrumented
  uint32_t exit_calls = 0;  // probe calls placed before them, in all
};

struct InjectionResult {
  std::string ptx; // the module, unchanged if no kernel matched
  uint32_t version_major = 0, version_minor = 0; // of the result
  std::vector<InstrumentedKernel> kernels;       // empty: nothing matched
  std::vector<std::pair<std::string, std::string>> renamed; // probe symbols
  bool changed() const { return !kernels.empty(); }
};

Result<InjectionResult> inject_probes(std::string_view module_ptx,
                                      const ProbeProgram &program);

// Variant for a probe module parsed once and reused across many modules.
Result<InjectionResult> inject_probes(std::string_view module_ptx,
                                      const PtxModule &probe,
                                      const ProbeProgram &program);

} // namespace ubtrace::runtime::gpu
