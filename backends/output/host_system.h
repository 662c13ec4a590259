// SystemInfo for the machine we run on: usernames from /etc/passwd, cgroup
// paths found by walking the mounted cgroup hierarchies for the directory
// whose inode number is the cgroup id (how the kernel numbers cgroups).
#pragma once

#include "backends/output/context.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ubtrace::output {

class HostSystemInfo : public SystemInfo {
public:
  // The files are parameters so tests can point them at fixtures.
  explicit HostSystemInfo(std::string passwd_path = "/etc/passwd",
                          std::string mounts_path = "/proc/mounts")
      : passwd_path_(std::move(passwd_path)),
        mounts_path_(std::move(mounts_path)) {}

  std::string username(uint64_t uid) override;
  std::string cgroup_path(uint64_t id) override;

  // The cgroup hierarchies: (name, mount point), "unified" for cgroup2
  // mounts, the mount directory's name for cgroup1 ones.
  std::vector<std::pair<std::string, std::string>> cgroup_roots() const;

private:
  std::string path_in_hierarchy(uint64_t id, const std::string &root);

  std::string passwd_path_;
  std::string mounts_path_;
  std::map<std::pair<uint64_t, std::string>, std::string> cgroup_cache_;
};

} // namespace ubtrace::output
