#include "backends/user_symbols.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace ubtrace::backends {

void UserSymbols::set_traced(pid_t pid, int region_fd) {
  struct stat st{};
  if (fstat(region_fd, &st) != 0)
    return;
  auto maps_region = [st](const runtime::symbols::AddressSpace &space) {
    for (const auto &m : space.mappings())
      if (m.inode == st.st_ino &&
          makedev(m.dev_major, m.dev_minor) == st.st_dev)
        return true;
    return false;
  };
  symbols_.add_lineage(pid, maps_region);
}

std::vector<output::SymbolFrame> UserSymbols::user(uint64_t addr, int64_t pid) {
  std::vector<output::SymbolFrame> out;
  if (pid <= 0)
    return out;
  for (auto &f : symbols_.symbolize(static_cast<pid_t>(pid), addr))
    out.push_back({std::move(f.name), f.offset, std::move(f.module),
                   std::move(f.file), f.line, f.inlined});
  return out;
}

std::optional<output::BuildIdFrame> UserSymbols::build_id(uint64_t addr,
                                                          int64_t pid) {
  auto loc = symbols_.locate(static_cast<pid_t>(pid), addr);
  if (!loc || loc->build_id.empty())
    return std::nullopt;
  return output::BuildIdFrame{loc->build_id, loc->file_offset};
}

std::optional<output::MappingInfo> UserSymbols::mapping(uint64_t addr,
                                                        int64_t pid) {
  auto loc = symbols_.locate(static_cast<pid_t>(pid), addr);
  if (!loc)
    return std::nullopt;
  return output::MappingInfo{loc->path, loc->map_start, loc->map_end,
                             loc->map_offset, loc->build_id};
}

} // namespace ubtrace::backends
