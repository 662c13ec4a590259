#include "runtime/symbols/binary_cache.h"

#include "runtime/symbols/debug_file.h"

namespace ubtrace::runtime::symbols {

Result<std::shared_ptr<BinaryInfo>>
BinaryInfo::open(const std::string &path, const SymbolLoadOptions &options) {
  auto identity = identify_file(path);
  if (!identity)
    return std::move(identity).take_error();
  auto elf = ElfFile::open(path);
  if (!elf)
    return std::move(elf).take_error();
  return std::shared_ptr<BinaryInfo>(
      new BinaryInfo(std::move(*elf), *identity, options));
}

const SymbolTable &BinaryInfo::symbols() const {
  std::call_once(symbols_once_, [this] {
    auto table = SymbolTable::load(elf_, options_);
    if (table)
      symbols_.emplace(std::move(*table));
    else
      symbols_.emplace(SymbolTable::from_symbols({}));
  });
  return *symbols_;
}

const Result<std::vector<UsdtProbe>> &BinaryInfo::usdt_probes() const {
  std::call_once(usdt_once_,
                 [this] { usdt_.emplace(read_usdt_probes(elf_, &symbols())); });
  return *usdt_;
}

const DwarfInfo *BinaryInfo::dwarf() const {
  std::call_once(dwarf_once_, [this] {
    if (options_.debug_files)
      if (auto debug = find_debug_file(elf_, options_.debug_root))
        dwarf_ = DwarfInfo::open(*debug);
    if (!dwarf_) {
      // Through the descriptor when the path names the file no more (it
      // was under the root of a process that has exited).
      auto now = identify_file(elf_.path());
      bool same = now && *now == identity_;
      dwarf_ = DwarfInfo::open(
          same || elf_.fd() < 0 ? elf_.path()
                                : "/proc/self/fd/" + std::to_string(elf_.fd()));
    }
  });
  return dwarf_.get();
}

Result<std::shared_ptr<BinaryInfo>> BinaryCache::get(const std::string &path) {
  auto identity = identify_file(path);
  if (!identity)
    return std::move(identity).take_error();
  std::lock_guard lock(mutex_);
  auto it = by_path_.find(path);
  if (it != by_path_.end() && it->second->identity() == *identity)
    return it->second;
  auto info = BinaryInfo::open(path, options_);
  if (!info)
    return std::move(info).take_error();
  by_path_[path] = *info;
  return info;
}

Result<std::shared_ptr<BinaryInfo>>
BinaryCache::get_mapped(const std::string &path, uint32_t dev_major,
                        uint32_t dev_minor, uint64_t inode) {
  {
    // Already open on that very inode: it is the mapped file, whatever
    // the path names now (gone with its process's root, replaced).
    std::lock_guard lock(mutex_);
    auto it = by_path_.find(path);
    if (it != by_path_.end() &&
        it->second->identity().same_inode(dev_major, dev_minor, inode))
      return it->second;
  }
  auto info = get(path);
  if (!info)
    return info;
  if (!(*info)->identity().same_inode(dev_major, dev_minor, inode))
    return make_error("'" + path + "' was replaced since it was mapped");
  return info;
}

} // namespace ubtrace::runtime::symbols
