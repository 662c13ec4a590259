// ubtrace -l: the user-space probes a pattern matches, and for GPU probes
// the CUDA kernels of a binary, read from the fatbins in its ELF (PTX
// entries and SASS cubins), without a GPU.
#pragma once

#include "backends/cli/options.h"
#include "backends/reporter.h"
#include "runtime/result.h"

#include <string>
#include <vector>

namespace ubtrace::cli {

// "TYPE:PATH:KERNEL" for every kernel of `binary` (a path, or a name found
// like a uprobe's binary) whose mangled, demangled or qualified name
// matches `pattern` (`*` wildcards; "" matches all). TYPE is kernel or
// kernelret.
Result<std::vector<std::string>> list_kernels(const std::string &type,
                                              const std::string &binary,
                                              const std::string &pattern);

// ubtrace -l [PATTERN]: prints what the pattern matches, one per line, as
// bpftrace lists them; returns the exit status. With no pattern and a pid,
// every uprobe and USDT probe of that process. `pid` 0: none. `verbose`
// (-lv): each uprobe's arguments under it, from the binary's DWARF.
int list_probes(const std::string &pattern, int pid, backends::Reporter &report,
                bool verbose = false);

} // namespace ubtrace::cli
