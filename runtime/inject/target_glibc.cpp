#include "runtime/inject/target_glibc.h"

#include "runtime/inject/hex.h"
#include "runtime/inject/sys_error.h"
#include "runtime/inject/unique_fd.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

std::string_view basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Opens `region`'s file as the target sees it.
Result<UniqueFd> open_mapped_file(pid_t pid, const MappedRegion &region) {
  std::string proc = "/proc/" + std::to_string(pid);
  if (!region.deleted) {
    UniqueFd fd(
        ::open((proc + "/root" + region.path).c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    if (fd.valid() && ::fstat(fd.get(), &st) == 0 && st.st_ino == region.inode)
      return fd;
  }
  char range[64];
  std::snprintf(range, sizeof range, "/map_files/%llx-%llx",
                static_cast<unsigned long long>(region.start),
                static_cast<unsigned long long>(region.end));
  UniqueFd fd(::open((proc + range).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return sys_error("cannot open " + region.path + " as process " +
                         std::to_string(pid) + " maps it",
                     errno);
  return fd;
}

std::optional<uint64_t> find_bytes(const std::vector<char> &haystack,
                                   const unsigned char *needle, size_t size) {
  auto it = std::search(haystack.begin(), haystack.end(), needle, needle + size,
                        [](char a, unsigned char b) {
                          return static_cast<unsigned char>(a) == b;
                        });
  if (it == haystack.end())
    return std::nullopt;
  return static_cast<uint64_t>(it - haystack.begin());
}

} // namespace

std::optional<GlibcPart> classify_glibc_path(std::string_view path) {
  std::string_view name = basename_of(path);
  if (starts_with(name, "libc.so.") || starts_with(name, "libc-2."))
    return GlibcPart::Libc;
  if (starts_with(name, "ld-linux") || starts_with(name, "ld-2.") ||
      starts_with(name, "ld64.so"))
    return GlibcPart::Loader;
  if (starts_with(name, "libpthread.so") || starts_with(name, "libpthread-2."))
    return GlibcPart::Libpthread;
  if (starts_with(name, "libdl.so") || starts_with(name, "libdl-2."))
    return GlibcPart::Libdl;
  return std::nullopt;
}

Result<TargetGlibc> TargetGlibc::locate(pid_t pid) {
  auto maps = read_maps(pid);
  if (!maps)
    return std::move(maps).take_error();

  // Regions of each glibc file, in address order (maps are sorted).
  std::map<std::string, std::vector<const MappedRegion *>> files;
  std::vector<std::string> order;
  for (const MappedRegion &region : *maps) {
    if (region.path.empty() || region.path[0] != '/' ||
        !classify_glibc_path(region.path))
      continue;
    auto &list = files[region.path];
    if (list.empty())
      order.push_back(region.path);
    list.push_back(&region);
  }

  TargetGlibc result;
  std::vector<char> libc_text;
  uint64_t libc_text_vaddr = 0;
  for (const std::string &path : order) {
    const auto &regions = files[path];
    GlibcObject object;
    object.part = *classify_glibc_path(path);
    object.path = path;
    for (const MappedRegion *region : regions)
      if (region->executable)
        object.text.emplace_back(region->start, region->end);
    if (object.part != GlibcPart::Loader) {
      auto fd = open_mapped_file(pid, *regions.front());
      if (!fd)
        return std::move(fd).take_error();
      auto symbols = ElfDynamicSymbols::read(fd->get(), path);
      if (!symbols)
        return std::move(symbols).take_error();
      auto vaddr = symbols->vaddr_of_mapping(regions.front()->offset);
      if (!vaddr)
        return make_error(path + ": its mapping at " +
                          hex(regions.front()->start) +
                          " matches no PT_LOAD segment");
      object.bias = regions.front()->start - *vaddr;
      if (object.part == GlibcPart::Libc && result.objects_.empty() == false &&
          result.objects_.front().part == GlibcPart::Libc)
        return make_error("process " + std::to_string(pid) +
                          " maps two C libraries");
      if (object.part == GlibcPart::Libc) {
        for (const LoadSegment &segment : symbols->segments()) {
          if (!segment.executable)
            continue;
          std::vector<char> text(segment.filesz);
          if (::pread(fd->get(), text.data(), text.size(),
                      static_cast<off_t>(segment.offset)) !=
              static_cast<ssize_t>(text.size()))
            return make_error(path + ": cannot read its code");
          libc_text = std::move(text);
          libc_text_vaddr = segment.vaddr;
          break;
        }
      }
      object.symbols =
          std::make_shared<const ElfDynamicSymbols>(std::move(symbols).value());
      object.file = std::make_shared<const UniqueFd>(std::move(*fd));
    }
    if (object.part == GlibcPart::Libc)
      result.objects_.insert(result.objects_.begin(), std::move(object));
    else
      result.objects_.push_back(std::move(object));
  }
  if (result.objects_.empty() ||
      result.objects_.front().part != GlibcPart::Libc)
    return make_error("process " + std::to_string(pid) +
                      " has no glibc mapped (statically linked, or another C "
                      "library): the agent cannot be loaded into it");

  const uint64_t bias = result.libc().bias;
  static constexpr unsigned char kSyscall[] = {0x0f, 0x05};
  auto syscall_at = find_bytes(libc_text, kSyscall, sizeof kSyscall);
  if (!syscall_at)
    return make_error(result.libc().path + ": no syscall instruction found");
  result.syscall_instruction_ = libc_text_vaddr + *syscall_at + bias;
  // __restore_rt: mov $0xf, %rax; syscall.
  static constexpr unsigned char kSigreturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00,
                                                 0x00, 0x00, 0x0f, 0x05};
  if (auto at = find_bytes(libc_text, kSigreturn, sizeof kSigreturn))
    result.sigreturn_ = libc_text_vaddr + *at + bias;
  return result;
}

std::optional<uint64_t> TargetGlibc::function(std::string_view name) const {
  for (GlibcPart part :
       {GlibcPart::Libc, GlibcPart::Libdl, GlibcPart::Libpthread}) {
    for (const GlibcObject &object : objects_) {
      if (object.part != part || !object.symbols)
        continue;
      const ElfFunction *function = object.symbols->find(name);
      if (function && !function->ifunc)
        return function->value + object.bias;
    }
  }
  return std::nullopt;
}

bool TargetGlibc::in_glibc_code(uint64_t address) const {
  for (const GlibcObject &object : objects_)
    for (auto [start, end] : object.text)
      if (address >= start && address < end)
        return true;
  return false;
}

std::vector<std::string_view>
TargetGlibc::libc_names_at(uint64_t address) const {
  const GlibcObject &object = libc();
  return object.symbols->names_at(address - object.bias);
}

std::vector<std::string_view> TargetGlibc::names_at(uint64_t address) const {
  for (const GlibcObject &object : objects_)
    for (auto [start, end] : object.text)
      if (address >= start && address < end && object.symbols)
        return object.symbols->names_at(address - object.bias);
  return {};
}

std::string TargetGlibc::describe(uint64_t address) const {
  for (const GlibcObject &object : objects_) {
    for (auto [start, end] : object.text) {
      if (address < start || address >= end)
        continue;
      std::string label(basename_of(object.path));
      if (object.symbols) {
        auto names = object.symbols->names_at(address - object.bias);
        if (!names.empty()) {
          const ElfFunction *function = object.symbols->find(names.front());
          uint64_t offset =
              address - object.bias - (function ? function->value : 0);
          return label + ":" + std::string(names.front()) + "+" + hex(offset);
        }
      }
      return label + "+" + hex(address - object.bias);
    }
  }
  return hex(address);
}

} // namespace ubtrace::runtime::inject
