// Names for the selector's table (see backend.h).
#include "backends/backend.h"

namespace ubtrace::backends {

const char *backend_name(BackendKind kind) {
  switch (kind) {
  case BackendKind::Cli:
    return "CLI";
  case BackendKind::Userspace:
    return "user-space";
  case BackendKind::Gpu:
    return "GPU";
  }
  return "";
}

const char *probe_kind_name(runtime::ProbeKind kind) {
  switch (kind) {
  case runtime::ProbeKind::Begin:
    return "begin";
  case runtime::ProbeKind::End:
    return "end";
  case runtime::ProbeKind::Interval:
    return "interval";
  case runtime::ProbeKind::Uprobe:
    return "uprobe";
  case runtime::ProbeKind::Uretprobe:
    return "uretprobe";
  case runtime::ProbeKind::Usdt:
    return "usdt";
  case runtime::ProbeKind::GpuKernelEntry:
    return "kernel";
  case runtime::ProbeKind::GpuKernelExit:
    return "kernelret";
  case runtime::ProbeKind::SelfSignal:
    return "self";
  case runtime::ProbeKind::Bench:
    return "bench";
  case runtime::ProbeKind::Profile:
    return "profile";
  case runtime::ProbeKind::Test:
    return "test";
  case runtime::ProbeKind::Syscall:
    return "tracepoint";
  case runtime::ProbeKind::PerfEvent:
    return "software, hardware, watchpoint";
  }
  return "";
}

std::string probe_kinds_of(BackendKind kind) {
  std::string out;
  for (runtime::ProbeKind p : kProbeKinds)
    if (backend_for(p) == kind)
      out += (out.empty() ? "" : ", ") + std::string(probe_kind_name(p));
  return out;
}

} // namespace ubtrace::backends
