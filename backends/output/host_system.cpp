#include "backends/output/host_system.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace ubtrace::output {

namespace fs = std::filesystem;

std::string HostSystemInfo::username(uint64_t uid) {
  std::ifstream passwd(passwd_path_);
  const std::string wanted = std::to_string(uid);
  std::string line;
  while (std::getline(passwd, line)) {
    // name:password:uid:...
    size_t first = line.find(':');
    if (first == std::string::npos)
      continue;
    size_t second = line.find(':', first + 1);
    if (second == std::string::npos)
      continue;
    size_t third = line.find(':', second + 1);
    std::string field = line.substr(second + 1, third == std::string::npos
                                                    ? std::string::npos
                                                    : third - second - 1);
    if (field == wanted)
      return line.substr(0, first);
  }
  return "";
}

std::vector<std::pair<std::string, std::string>>
HostSystemInfo::cgroup_roots() const {
  std::vector<std::pair<std::string, std::string>> v2, v1;
  std::ifstream mounts(mounts_path_);
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string type, dir;
    fields >> type >> dir;
    std::error_code ec;
    if ((type != "cgroup" && type != "cgroup2") || !fs::is_directory(dir, ec))
      continue;
    if (type == "cgroup2")
      v2.emplace_back("unified", dir);
    else
      v1.emplace_back(fs::path(dir).filename().string(), dir);
  }
  std::sort(v1.begin(), v1.end());
  v2.insert(v2.end(), v1.begin(), v1.end());
  return v2;
}

static bool has_inode(const std::string &path, uint64_t ino) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && st.st_ino == ino;
}

std::string HostSystemInfo::path_in_hierarchy(uint64_t id,
                                              const std::string &root) {
  auto key = std::make_pair(id, root);
  auto cached = cgroup_cache_.find(key);
  if (cached != cgroup_cache_.end() &&
      has_inode(root + (cached->second == "/" ? "" : cached->second), id))
    return cached->second;
  if (has_inode(root, id))
    return cgroup_cache_[key] = "/";
  std::error_code ec;
  fs::recursive_directory_iterator it(
      root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec))
      continue;
    const std::string path = it->path().string();
    if (has_inode(path, id))
      return cgroup_cache_[key] = path.substr(root.size());
  }
  return "";
}

std::string HostSystemInfo::cgroup_path(uint64_t id) {
  std::string joined;
  for (const auto &[name, root] : cgroup_roots()) {
    std::string path = path_in_hierarchy(id, root);
    if (path.empty())
      continue;
    if (!joined.empty())
      joined += ",";
    joined += name + ":" + path;
  }
  return joined;
}

} // namespace ubtrace::output
