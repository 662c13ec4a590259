#include "runtime/symbols/debug_file.h"

#include <array>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <filesystem>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

namespace ubtrace::runtime::symbols {
namespace {

bool same_build_id(const ElfFile &file, const std::string &candidate) {
  auto debug = ElfFile::open(candidate);
  return debug && debug->build_id() == file.build_id();
}

bool crc_matches(const std::string &candidate, uint32_t expected) {
  int fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  uint32_t crc = 0;
  std::array<uint8_t, 1 << 16> buf;
  ssize_t n;
  while ((n = ::read(fd, buf.data(), buf.size())) > 0)
    crc = debuglink_crc32(buf.data(), static_cast<size_t>(n), crc);
  ::close(fd);
  return n == 0 && crc == expected;
}

bool is_file(const std::string &path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::vector<std::string> &search_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

} // namespace

void set_debug_search_dirs(std::vector<std::string> dirs) {
  search_dirs() = std::move(dirs);
}

uint32_t debuglink_crc32(const uint8_t *data, size_t size, uint32_t crc) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

std::optional<std::string> find_debug_file(const ElfFile &file,
                                           const std::string &debug_root) {
  const auto &id = file.build_id();
  auto link = file.debug_link();
  auto matches = [&](const std::string &candidate) {
    if (!is_file(candidate))
      return false;
    if (!id.empty())
      return same_build_id(file, candidate);
    return link && crc_matches(candidate, link->crc);
  };
  // A relative directory is looked for from the current directory, then
  // from the binary's (as elfutils' debuginfo path reads it).
  std::vector<std::string> dirs;
  for (const std::string &dir : search_dirs()) {
    dirs.push_back(dir);
    if (!dir.empty() && dir[0] != '/')
      dirs.push_back(
          (std::filesystem::path(file.path()).parent_path() / dir).string());
  }
  for (const std::string &dir : dirs) {
    std::vector<std::string> candidates;
    if (link)
      candidates.push_back(dir + "/" + link->name);
    if (id.size() >= 2) {
      std::string hex = build_id_hex(id);
      candidates.push_back(dir + "/.build-id/" + hex.substr(0, 2) + "/" +
                           hex.substr(2) + ".debug");
    }
    candidates.push_back(
        dir + "/" + std::filesystem::path(file.path()).filename().string() +
        ".debug");
    for (const auto &candidate : candidates)
      if (matches(candidate))
        return candidate;
  }
  if (id.size() >= 2) {
    std::string hex = build_id_hex(id);
    std::string candidate = debug_root + "/.build-id/" + hex.substr(0, 2) +
                            "/" + hex.substr(2) + ".debug";
    if (is_file(candidate) && same_build_id(file, candidate))
      return candidate;
  }

  if (!link)
    return std::nullopt;
  std::error_code ec;
  auto real = std::filesystem::canonical(file.path(), ec);
  std::string dir =
      (ec ? std::filesystem::path(file.path()) : real).parent_path().string();
  for (const std::string &candidate :
       {dir + "/" + link->name, dir + "/.debug/" + link->name,
        debug_root + dir + "/" + link->name}) {
    if (!is_file(candidate) || candidate == real.string())
      continue;
    bool matches = !id.empty() ? same_build_id(file, candidate)
                               : crc_matches(candidate, link->crc);
    if (matches)
      return candidate;
  }
  return std::nullopt;
}

std::optional<ElfFile> open_mini_debuginfo(const ElfFile &file) {
  const Section *s = file.section(".gnu_debugdata");
  if (!s)
    return std::nullopt;
  auto compressed = file.section_bytes(*s);
  if (!compressed || compressed->empty())
    return std::nullopt;
  // libdw decompresses what it is handed through a file descriptor.
  int fd = memfd_create("ubtrace-debugdata", MFD_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  bool written = ::write(fd, compressed->data(), compressed->size()) ==
                 static_cast<ssize_t>(compressed->size());
  std::optional<ElfFile> out;
  if (written && ::lseek(fd, 0, SEEK_SET) == 0) {
    Elf *elf = dwelf_elf_begin(fd);
    size_t size = 0;
    char *image = elf ? elf_rawfile(elf, &size) : nullptr;
    if (image && size > 0) {
      std::vector<uint8_t> copy(image, image + size);
      auto parsed = ElfFile::from_memory(std::move(copy),
                                         file.path() + "[.gnu_debugdata]");
      if (parsed)
        out.emplace(std::move(*parsed));
    }
    if (elf)
      elf_end(elf);
  }
  ::close(fd);
  return out;
}

} // namespace ubtrace::runtime::symbols
