// Where a process to inject finds the agent library: the name its dlopen
// is given. A process in our mount namespace and root sees the agent where
// we do. One in a container does not, and is served, in this order:
//
//  1. Already loaded (an earlier trace copied the agent in, below): the
//     name it was loaded under. glibc's dlopen finds a loaded object by
//     that name without opening the file (gone since), so the process
//     never holds two agents.
//  2. The same file under another name: the mounts the process sees
//     (/proc/PID/mountinfo) are searched for one of the agent's file
//     system whose root holds the agent (a bind mount of the host's build
//     or install folder; the old root kept after pivot_root). The name is
//     checked through /proc/PID/root: same device, same inode.
//  3. A copy: the agent, the library it needs next to it, and those of
//     their dependencies the process's root lacks are copied into a new
//     folder ".ubtrace-agent-<pid>-<random>" of the first of /tmp,
//     /dev/shm, /var/tmp and /run that is there in the process's root,
//     writable, and on a mount without noexec. The copy is removed once
//     the load is over (the object stays mapped): nothing is left in the
//     container but what the process maps. A CLI killed between the copy
//     and the load leaves the folder behind.
//
// The agent's own dependencies are found as the host's loader finds them
// (RUNPATH $ORIGIN first, then the standard directories); glibc's parts
// (libc, the loader) are never copied: the process's own are in use.
#pragma once

#include "runtime/result.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::inject {

// One line of /proc/PID/mountinfo (the fields placement needs; paths
// unescaped, relative to that process's root).
struct MountEntry {
  unsigned major = 0, minor = 0;
  std::string root;        // the folder of the file system mounted
  std::string mount_point; // where, in the process's view
  std::string options;     // per-mount options ("rw,nosuid,noexec,...")
};
std::vector<MountEntry> parse_mountinfo(const std::string &text);

// The mount that holds `path` (the last mounted over it wins), or null.
const MountEntry *mount_of(const std::vector<MountEntry> &mounts,
                           const std::string &path);

// The agent placed for one injection; a copy is removed when this goes.
class PlacedAgent {
public:
  static Result<PlacedAgent> place(pid_t pid, const std::string &agent);

  // What the target's dlopen is given.
  const std::string &path() const { return path_; }
  // How it was found, for -v ("the same path", "already loaded", ...).
  const std::string &how() const { return how_; }

  PlacedAgent(PlacedAgent &&other) noexcept;
  PlacedAgent &operator=(PlacedAgent &&) = delete;
  PlacedAgent(const PlacedAgent &) = delete;
  ~PlacedAgent();

private:
  PlacedAgent() = default;
  std::string path_, how_;
  std::string copy_dir_;            // as we reach it (/proc/PID/root/...)
  std::vector<std::string> copied_; // files in it
};

} // namespace ubtrace::runtime::inject
