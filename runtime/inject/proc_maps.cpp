#include "runtime/inject/proc_maps.h"

#include "runtime/file_text.h"
#include "runtime/inject/sys_error.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ubtrace::runtime::inject {

std::vector<MappedRegion> parse_maps(std::string_view text) {
  std::vector<MappedRegion> maps;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string line(text.substr(pos, eol == std::string_view::npos
                                          ? std::string_view::npos
                                          : eol - pos));
    pos = eol == std::string_view::npos ? text.size() : eol + 1;

    MappedRegion region;
    char perms[5] = {};
    unsigned long long start, end, offset, inode;
    int path_at = -1;
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %llx %*x:%*x %llu %n", &start,
                    &end, perms, &offset, &inode, &path_at) < 5)
      continue;
    region.start = start;
    region.end = end;
    region.offset = offset;
    region.inode = inode;
    region.readable = perms[0] == 'r';
    region.writable = perms[1] == 'w';
    region.executable = perms[2] == 'x';
    if (path_at > 0 && static_cast<size_t>(path_at) <= line.size())
      region.path = line.substr(static_cast<size_t>(path_at));
    static constexpr std::string_view kDeleted = " (deleted)";
    if (region.path.size() > kDeleted.size() &&
        region.path.compare(region.path.size() - kDeleted.size(),
                            kDeleted.size(), kDeleted) == 0) {
      region.deleted = true;
      region.path.resize(region.path.size() - kDeleted.size());
    }
    maps.push_back(std::move(region));
  }
  return maps;
}

Result<std::vector<MappedRegion>> read_maps(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/maps";
  auto text = read_file(path);
  if (!text)
    return make_error(text.error());
  return parse_maps(*text);
}

const MappedRegion *find_region(const std::vector<MappedRegion> &maps,
                                uint64_t address) {
  for (const MappedRegion &region : maps)
    if (region.contains(address))
      return &region;
  return nullptr;
}

} // namespace ubtrace::runtime::inject
