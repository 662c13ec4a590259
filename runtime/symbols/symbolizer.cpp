#include "runtime/symbols/symbolizer.h"

#include "runtime/symbols/demangle.h"

namespace ubtrace::runtime::symbols {

Symbolizer::Symbolizer(SymbolizerOptions options,
                       std::shared_ptr<BinaryCache> cache)
    : options_(options), cache_(std::move(cache)) {
  if (!cache_)
    cache_ = std::make_shared<BinaryCache>();
}

void Symbolizer::add_snapshot(AddressSpace snapshot) {
  std::lock_guard lock(mutex_);
  pid_t pid = snapshot.pid();
  spaces_.insert_or_assign(
      pid, std::make_shared<const AddressSpace>(std::move(snapshot)));
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
  return spaces_.count(pid) != 0;
}

std::shared_ptr<const AddressSpace> Symbolizer::space_of(pid_t pid) {
  {
    std::lock_guard lock(mutex_);
    auto it = spaces_.find(pid);
    if (it != spaces_.end())
      return it->second;
  }
  // First sight of this process: snapshot it while it (maybe) lives.
  if (!snapshot(pid))
    return nullptr;
  std::lock_guard lock(mutex_);
  auto it = spaces_.find(pid);
  return it == spaces_.end() ? nullptr : it->second;
}

std::optional<FileLocation> Symbolizer::locate(pid_t pid, uint64_t addr) {
  auto space = space_of(pid);
  if (!space)
    return std::nullopt;
  const Mapping *m = space->mapping_at(addr);
  if (!m || !m->is_file())
    return std::nullopt;
  FileLocation loc;
  loc.path = m->path;
  loc.file_offset = m->file_offset_of(addr);
  auto binary =
      cache_->get_mapped(m->path, m->dev_major, m->dev_minor, m->inode);
  if (binary) {
    loc.vaddr = (*binary)->elf().offset_to_vaddr(loc.file_offset);
    loc.build_id = (*binary)->elf().build_id();
  }
  return loc;
}

std::vector<SymbolizedFrame> Symbolizer::symbolize(pid_t pid, uint64_t addr) {
  auto space = space_of(pid);
  if (!space)
    return {};
  const Mapping *m = space->mapping_at(addr);
  if (!m || !m->is_file())
    return {};
  auto binary =
      cache_->get_mapped(m->path, m->dev_major, m->dev_minor, m->inode);
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
