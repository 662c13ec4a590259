#include "runtime/symbols/symbolizer.h"

#include "runtime/proc_stat.h"
#include "runtime/symbols/demangle.h"

#include <algorithm>

namespace ubtrace::runtime::symbols {

Symbolizer::Symbolizer(SymbolizerOptions options,
                       std::shared_ptr<BinaryCache> cache)
    : options_(options), cache_(std::move(cache)) {
  if (!cache_)
    cache_ = std::make_shared<BinaryCache>();
}

namespace {
// New mappings recorded per process: plenty for a library loaded at a new
// place each time, bounded for one that churns forever.
constexpr size_t kSnapshotsKept = 4096;
} // namespace

void Symbolizer::add_snapshot(AddressSpace snapshot) {
  std::lock_guard lock(mutex_);
  through_parent_.erase(snapshot.pid());
  record(std::move(snapshot));
}

void Symbolizer::record(AddressSpace snapshot) {
  pid_t pid = snapshot.pid();
  auto &list = spaces_[pid];
  auto &seen = seen_[pid];
  std::vector<Mapping> fresh;
  for (const Mapping &m : snapshot.mappings())
    if (m.is_file() && seen.emplace(m.start, m.end, m.offset, m.inode).second)
      fresh.push_back(m);
  // Files seen only under the process's root (another mount namespace)
  // vanish from our view with it: its executable code's files are opened
  // now, and the cache keeps them for after it exits.
  for (const Mapping &m : snapshot.mappings())
    if (m.executable && m.is_file())
      if (std::string path = snapshot.open_path(m); path != m.path)
        (void)cache_->get_mapped(path, m.dev_major, m.dev_minor, m.inode);
  if (list.empty())
    list.push_back(std::make_shared<const AddressSpace>(std::move(snapshot)));
  else if (!fresh.empty() && list.size() < kSnapshotsKept)
    list.push_back(std::make_shared<const AddressSpace>(
        AddressSpace::from_mappings(pid, std::move(fresh), snapshot.root())));
}

void Symbolizer::add_lineage(pid_t parent,
                             std::function<bool(const AddressSpace &)> own) {
  std::lock_guard lock(mutex_);
  if (std::find(lineage_parents_.begin(), lineage_parents_.end(), parent) ==
      lineage_parents_.end())
    lineage_parents_.push_back(parent);
  own_ = std::move(own);
}

pid_t Symbolizer::lineage_parent_of(pid_t pid, uint64_t addr) const {
  if (lineage_parents_.empty())
    return 0;
  if (std::find(lineage_parents_.begin(), lineage_parents_.end(), pid) !=
      lineage_parents_.end())
    return pid;
  // Up the parent chain while it lives (a child forked by a child).
  for (int depth = 0; lineage_parents_.size() > 1 && depth < 32; ++depth) {
    auto stat = read_proc_stat(pid);
    if (!stat || stat->ppid <= 1)
      break;
    if (std::find(lineage_parents_.begin(), lineage_parents_.end(),
                  stat->ppid) != lineage_parents_.end())
      return stat->ppid;
    pid = stat->ppid;
  }
  for (auto parent = lineage_parents_.begin();
       lineage_parents_.size() > 1 && parent != lineage_parents_.end();
       ++parent) {
    auto it = spaces_.find(*parent);
    if (it == spaces_.end())
      continue;
    for (const auto &space : it->second)
      if (const Mapping *m = space->mapping_at(addr); m && m->is_file())
        return *parent;
  }
  return lineage_parents_.front();
}

Result<void> Symbolizer::snapshot(pid_t pid) {
  auto space = AddressSpace::snapshot(pid);
  if (!space)
    return std::move(space).take_error();
  add_snapshot(std::move(*space));
  return {};
}

bool Symbolizer::has_snapshot(pid_t pid) const {
  std::lock_guard lock(mutex_);
  return spaces_.count(pid) != 0 || through_parent_.count(pid) != 0;
}

std::vector<Symbolizer::Space> Symbolizer::spaces_of(pid_t pid, uint64_t addr) {
  auto known = [&]() -> std::optional<std::vector<Space>> {
    std::lock_guard lock(mutex_);
    auto through = through_parent_.find(pid);
    pid_t who = through != through_parent_.end() ? through->second : pid;
    auto it = spaces_.find(who);
    if (it == spaces_.end())
      return std::nullopt;
    return std::vector<Space>(it->second.rbegin(), it->second.rend());
  };
  if (auto spaces = known())
    return *spaces;
  // First sight of this process: snapshot it while it (maybe) lives and is
  // still the traced program; else its parent's snapshots stand for it.
  auto space = AddressSpace::snapshot(pid);
  {
    std::lock_guard lock(mutex_);
    if (space && (!own_ || own_(*space)))
      record(std::move(*space));
    else if (pid_t parent = lineage_parent_of(pid, addr);
             parent && pid != parent)
      through_parent_[pid] = parent;
  }
  return known().value_or(std::vector<Space>{});
}

std::pair<Symbolizer::Space, const Mapping *>
Symbolizer::file_mapping(pid_t pid, uint64_t addr) {
  for (auto &space : spaces_of(pid, addr))
    if (const Mapping *m = space->mapping_at(addr); m && m->is_file())
      return {space, m};
  return {nullptr, nullptr};
}

std::optional<FileLocation> Symbolizer::locate(pid_t pid, uint64_t addr) {
  auto [space, m] = file_mapping(pid, addr);
  if (!m)
    return std::nullopt;
  FileLocation loc;
  loc.path = m->path;
  loc.file_offset = m->file_offset_of(addr);
  loc.map_start = m->start;
  loc.map_end = m->end;
  loc.map_offset = m->offset;
  auto binary = cache_->get_mapped(space->open_path(*m), m->dev_major,
                                   m->dev_minor, m->inode);
  if (binary) {
    loc.vaddr = (*binary)->elf().offset_to_vaddr(loc.file_offset);
    loc.build_id = (*binary)->elf().build_id();
  }
  return loc;
}

bool Symbolizer::maps_file(pid_t pid, uint64_t addr) {
  return file_mapping(pid, addr).second != nullptr;
}

std::vector<SymbolizedFrame> Symbolizer::symbolize(pid_t pid, uint64_t addr) {
  auto [space, m] = file_mapping(pid, addr);
  if (!m)
    return {};
  auto binary = cache_->get_mapped(space->open_path(*m), m->dev_major,
                                   m->dev_minor, m->inode);
  if (!binary)
    return {};
  auto vaddr = (*binary)->elf().offset_to_vaddr(m->file_offset_of(addr));
  if (!vaddr)
    return {};
  return frames_for(**binary, m->path, *vaddr);
}

std::vector<SymbolizedFrame>
Symbolizer::symbolize_file_vaddr(const std::string &path, uint64_t vaddr) {
  auto binary = cache_->get(path);
  if (!binary)
    return {};
  return frames_for(**binary, path, vaddr);
}

std::vector<SymbolizedFrame> Symbolizer::frames_for(const BinaryInfo &binary,
                                                    const std::string &module,
                                                    uint64_t vaddr) const {
  const ElfSymbol *sym = binary.symbols().function_at(vaddr);
  if (!sym)
    return {};
  std::vector<SymbolizedFrame> frames;
  SymbolizedFrame outer;
  outer.name = options_.demangle ? demangle_or_self(sym->name) : sym->name;
  outer.offset = vaddr - sym->vaddr;
  outer.module = module;
  if (options_.source_lines) {
    if (const DwarfInfo *dwarf = binary.dwarf()) {
      DwarfLookup found = dwarf->lookup(vaddr, options_.demangle);
      for (auto &inl : found.inlined) {
        SymbolizedFrame f;
        f.name = std::move(inl.name);
        f.module = module;
        f.inlined = true;
        if (inl.location) {
          f.file = inl.location->file;
          f.line = inl.location->line;
        }
        frames.push_back(std::move(f));
      }
      if (found.location) {
        outer.file = found.location->file;
        outer.line = found.location->line;
      }
    }
  }
  frames.push_back(std::move(outer));
  return frames;
}

} // namespace ubtrace::runtime::symbols
