// Finding the program of `-c` and checking that the agent can be preloaded
// into it, before anything is started: errors the user can act on instead
// of a trace that silently never starts.
#pragma once

#include "runtime/result.h"

#include <optional>
#include <string>

namespace ubtrace::runtime::inject {

// execvp's lookup: a name with a '/' is used as is; otherwise each entry of
// `path_env` (the PATH value; nullopt = unset, which searches the
// confstr(_CS_PATH) default "/bin:/usr/bin"; empty entries mean the
// current directory) is tried in order and the first regular executable
// file wins. Errors: "command not found: NAME", "permission denied: PATH".
Result<std::string> find_executable(const std::string &name,
                                    const std::optional<std::string> &path_env);

// Whether the dynamic loader will honour LD_PRELOAD for `path`: an x86-64
// ELF with an interpreter (not statically linked), not setuid/setgid or
// file-capability-bearing (the loader runs those in secure mode, where
// LD_PRELOAD is restricted); "#!" scripts are checked through their
// interpreter.
Result<void> check_preloadable(const std::string &path);

// The PT_INTERP of an ELF file ("/lib64/ld-linux-x86-64.so.2"); nullopt
// for a statically linked one.
Result<std::optional<std::string>> elf_interpreter(const std::string &path);

// Whether the ELF file at `path` is a shared library other programs may
// map: a shared object with no interpreter, or with a DT_SONAME (glibc's
// libc.so.6 has both an interpreter and a soname: it runs too). A
// position-independent program (an interpreter, no soname) is not; nor is
// a fixed-address one.
Result<bool> elf_shared_library(const std::string &path);

} // namespace ubtrace::runtime::inject
