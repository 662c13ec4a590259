// The builtin variables of the language (pid, comm, arg0, ...): their names
// and types, shared by the parser (a parenthesised builtin is never a cast)
// and semantic analysis.
#pragma once

#include "ast/types.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::ast {

// Probe families a builtin may appear in.
enum ProbeSet : unsigned {
  PS_CLI = 1u << 0,       // BEGIN/END/interval (run in the CLI)
  PS_UPROBE = 1u << 1,    // uprobe and usdt
  PS_URETPROBE = 1u << 2, // uretprobe
  PS_GPU = 1u << 3,       // kernel:
  PS_GPU_RET = 1u << 4,   // kernelret:
  PS_KERNEL = 1u << 5,    // kernel-side bpftrace probes (kprobe, ...): parsed,
                          // never run by ubtrace
  PS_USER = PS_UPROBE | PS_URETPROBE,
  PS_GPU_ANY = PS_GPU | PS_GPU_RET,
  PS_HOST = PS_CLI | PS_USER | PS_KERNEL,
  PS_ALL = PS_HOST | PS_GPU_ANY,
};

struct BuiltinInfo {
  std::string name;
  unsigned probes; // ProbeSet bits where it is valid
};

// Known builtin, or nothing. arg0..argN and sarg0..sargN are matched by
// pattern.
std::optional<BuiltinInfo> lookup_builtin(std::string_view name);
bool is_builtin_name(std::string_view name);
const std::vector<std::string> &builtin_names();

// argN -> N, sargN -> N (or -1)
int builtin_arg_index(std::string_view name, std::string_view prefix);

} // namespace ubtrace::ast
