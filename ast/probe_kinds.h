// Probe kinds: the table of probe types (ast/probe_kinds.def) and what each
// row says. The attach-point pass gives every attach point its kind from
// this table; after it, nothing looks at a probe type's spelling.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ubtrace::ast {

// Probe families a builtin may appear in (a builtin row's probe set).
enum ProbeSet : unsigned {
  PS_CLI = 1u << 0,       // begin/end/interval (run in the CLI)
  PS_UPROBE = 1u << 1,    // uprobe and usdt
  PS_URETPROBE = 1u << 2, // uretprobe
  PS_GPU = 1u << 3,       // kernel:
  PS_GPU_RET = 1u << 4,   // kernelret:
  PS_KERNEL = 1u << 5,    // kernel-side bpftrace probes (kprobe, ...): parsed,
                          // never run by ubtrace
  PS_PROFILE = 1u << 6,   // profile: a sample of a thread of the process
  PS_SYSCALL = 1u << 7,   // tracepoint:syscalls/raw_syscalls: a system call
                          // of the process, at its entry or exit
  PS_USER = PS_UPROBE | PS_URETPROBE,
  PS_GPU_ANY = PS_GPU | PS_GPU_RET,
  PS_HOST = PS_CLI | PS_USER | PS_PROFILE | PS_SYSCALL | PS_KERNEL,
  PS_ALL = PS_HOST | PS_GPU_ANY,
};

// Who runs a probe kind.
enum class Backend : uint8_t {
  Cli,       // the ubtrace process: begin, end, interval
  Userspace, // the traced process, through the injected agent
  Gpu,       // CUDA kernels, through PTX injection
  None,      // nobody: a kernel-side probe type of bpftrace's
};

enum class ProbeKind : uint8_t {
#define UBT_PROBE_KIND(id, name, alias, backend, set) id,
#include "ast/probe_kinds.def"
#undef UBT_PROBE_KIND
};

// For an exhaustive switch over ProbeKind that treats the kinds no backend
// runs alike: every row of Backend None becomes `case ProbeKind::Id:`,
//
//   #define UBT_PROBE_KIND(id, name, alias, backend, set)
//     UBT_CASE_IF_##backend(id)
//   #include "ast/probe_kinds.def"
//   #undef UBT_PROBE_KIND
//     return ...;
//
// so that a new row a backend runs is a case the compiler asks for.
#define UBT_CASE_IF_None(id) case ProbeKind::id:
#define UBT_CASE_IF_Cli(id)
#define UBT_CASE_IF_Userspace(id)
#define UBT_CASE_IF_Gpu(id)

struct ProbeKindInfo {
  ProbeKind kind;
  std::string_view name;  // canonical, as `probe` prints it
  std::string_view alias; // "" when none
  Backend backend;
  unsigned probe_set; // ProbeSet bit
};

// Every row, in table order.
const ProbeKindInfo *probe_kind_table(size_t &count);
const ProbeKindInfo &probe_kind_info(ProbeKind k);
// A provider as a script writes it: name or alias.
std::optional<ProbeKind> find_probe_kind(std::string_view word);

inline std::string_view probe_kind_name(ProbeKind k) {
  return probe_kind_info(k).name;
}
inline Backend backend_of(ProbeKind k) {
  return probe_kind_info(k).backend;
}
inline unsigned probe_set_of(ProbeKind k) {
  return probe_kind_info(k).probe_set;
}
// The kinds some backend runs, as "begin, end, ... and kernelret".
const std::string &runnable_probe_kinds();

} // namespace ubtrace::ast
