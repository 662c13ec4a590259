#include "runtime/symbols/address_space.h"

#include "runtime/symbols/binary_resolver.h"
#include "runtime/symbols/elf_file.h"

#include <algorithm>
#include <filesystem>
#include <map>

namespace ubtrace::runtime::symbols {

Result<AddressSpace> AddressSpace::snapshot(pid_t pid) {
  auto maps = read_proc_maps(pid);
  if (!maps)
    return std::move(maps).take_error();
  AddressSpace space = from_mappings(pid, std::move(*maps), process_root(pid));
  std::error_code ec;
  auto exe = std::filesystem::read_symlink(
      "/proc/" + std::to_string(pid) + "/exe", ec);
  if (!ec)
    space.exe_ = exe.string();
  return space;
}

AddressSpace AddressSpace::from_mappings(pid_t pid,
                                         std::vector<Mapping> mappings,
                                         const std::string &root) {
  AddressSpace space;
  space.pid_ = pid;
  space.root_ = root;
  std::sort(
      mappings.begin(), mappings.end(),
      [](const Mapping &a, const Mapping &b) { return a.start < b.start; });
  space.mappings_ = std::move(mappings);
  std::map<std::string, std::optional<FileIdentity>> by_path;
  auto identify = [&](const std::string &path) {
    auto it = by_path.find(path);
    if (it == by_path.end()) {
      auto found = identify_file(path);
      it = by_path.emplace(path, found ? std::optional(*found) : std::nullopt)
               .first;
    }
    return it->second;
  };
  for (const Mapping &m : space.mappings_) {
    std::optional<FileIdentity> id;
    bool under_root = false;
    if (m.is_file() && !m.deleted) {
      // A file replaced since it was mapped is not the mapped file.
      auto mapped = [&](const std::optional<FileIdentity> &f) {
        return f && f->same_inode(m.dev_major, m.dev_minor, m.inode);
      };
      if (auto here = identify(m.path); mapped(here)) {
        id = here;
      } else if (!root.empty()) {
        if (auto there = identify(root + m.path); mapped(there)) {
          id = there;
          under_root = true;
        }
      }
    }
    space.identities_.push_back(id);
    space.under_root_.push_back(under_root);
  }
  return space;
}

std::string AddressSpace::open_path(const Mapping &m) const {
  size_t i = static_cast<size_t>(&m - mappings_.data());
  if (i < under_root_.size() && under_root_[i])
    return root_ + m.path;
  return m.path;
}

const Mapping *AddressSpace::mapping_at(uint64_t addr) const {
  auto it = std::upper_bound(
      mappings_.begin(), mappings_.end(), addr,
      [](uint64_t a, const Mapping &m) { return a < m.start; });
  if (it == mappings_.begin())
    return nullptr;
  --it;
  return it->contains(addr) ? &*it : nullptr;
}

const FileIdentity *AddressSpace::identity_of(const Mapping &m) const {
  size_t i = static_cast<size_t>(&m - mappings_.data());
  if (i >= identities_.size() || !identities_[i])
    return nullptr;
  return &*identities_[i];
}

std::vector<const Mapping *>
AddressSpace::mappings_of(const std::string &path) const {
  std::vector<const Mapping *> out;
  auto id = identify_file(path);
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(path, ec);
  for (const Mapping &m : mappings_) {
    if (!m.is_file())
      continue;
    bool same = id ? id->same_inode(m.dev_major, m.dev_minor, m.inode)
                   : (!ec && canonical == m.path);
    if (same)
      out.push_back(&m);
  }
  return out;
}

std::optional<uint64_t>
AddressSpace::runtime_address(const std::string &path,
                              uint64_t file_offset) const {
  std::optional<uint64_t> any;
  for (const Mapping *m : mappings_of(path)) {
    if (file_offset < m->offset || file_offset - m->offset >= m->end - m->start)
      continue;
    uint64_t addr = m->start + (file_offset - m->offset);
    if (m->executable)
      return addr;
    if (!any)
      any = addr;
  }
  return any;
}

std::optional<uint64_t> AddressSpace::load_bias(const std::string &path,
                                                const ElfFile &file) const {
  for (const Mapping *m : mappings_of(path))
    for (const LoadSegment &seg : file.segments())
      if (seg.offset >= m->offset && seg.offset - m->offset < m->end - m->start)
        return m->start + (seg.offset - m->offset) - seg.vaddr;
  return std::nullopt;
}

} // namespace ubtrace::runtime::symbols
