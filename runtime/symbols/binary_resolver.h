// BIN of `uprobe:BIN:FUNC` and `usdt:BIN:...` to the files it means, the
// way bpftrace and the dynamic loader find them:
//
//   "/usr/bin/bash", "./app"  a path (relative to the current directory)
//   "/usr/lib/*/libc.so.*"    a glob; every probeable match
//   "*"                       every file the process maps (needs a pid;
//                             without one, every process's files)
//   "libc", "libssl",         a library: the one the process maps (when a
//   "libc.so.6"               pid is known: the most reliable answer), else
//                             LD_LIBRARY_PATH, /etc/ld.so.cache and the
//                             standard (multiarch) directories, like ld.so
//   "bash"                    a program: ./bash, then each PATH directory
//
// A name that could be either ("libfoo") is tried as a library first, then
// as a program. A process confined to another root (chroot, a container's
// mount namespace) sees files there: with a pid whose root is not ours,
// paths, PATH, LD_LIBRARY_PATH, the loader's cache and the standard
// directories are looked up under /proc/PID/root (what the process maps
// is read from its maps, whose paths are ours already). Only ELF files a uprobe
// can target are returned (shared objects, and executables with the
// owner-execute bit). The same file reached twice (/bin/bash and /usr/bin/bash
// with a merged /usr) is returned once: bpftrace would warn that two binaries
// matched.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/ld_cache.h"
#include "runtime/symbols/library_names.h"

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::symbols {

enum class BinarySource : uint8_t {
  GivenPath,     // BIN held a '/'
  Glob,          // BIN held a wildcard
  ProcessMaps,   // mapped by the process (library name, or "*")
  LdLibraryPath, // a directory of LD_LIBRARY_PATH
  LdCache,       // /etc/ld.so.cache
  DefaultDir,    // a standard library directory
  CurrentDir,    // a bare name found in the current directory
  SearchPath,    // a bare name found on PATH
};

struct ResolvedBinary {
  std::string path;
  BinarySource source = BinarySource::GivenPath;
};

struct BinaryResolveOptions {
  std::optional<pid_t> pid;
  // Where the process's "/" is for us ("" when it is ours): see
  // process_root(); absolute paths are looked up under it.
  std::string root;
  // Unset: this process's environment. The CLI passes the target's when it
  // differs (a process started with another PATH).
  std::optional<std::string> path_env;
  std::optional<std::string> ld_library_path;
  std::string ld_cache = kLdCachePath;
  // Searched after the cache, in this order (ld.so's trusted directories
  // with Debian's multiarch ones first).
  std::vector<std::string> default_dirs = default_library_dirs();

  static std::vector<std::string> default_library_dirs();
};

// "/proc/PID/root" when process `pid` has another root than ours (it
// chroot()ed, or pivot_root()ed in a container) or the same root in
// another mount namespace (unshare -m: other files may be mounted), else
// "".
std::string process_root(pid_t pid);

// All files BIN stands for, best first; an error that says what was
// searched when there is none.
Result<std::vector<ResolvedBinary>>
resolve_binary(std::string_view bin, const BinaryResolveOptions &options = {});

} // namespace ubtrace::runtime::symbols
