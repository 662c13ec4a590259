#include "runtime/symbols/ld_cache.h"

#include "runtime/file_text.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace ubtrace::runtime::symbols {
namespace {

// glibc's sysdeps/generic/ldconfig.h
constexpr uint32_t kFlagTypeMask = 0x00ff;
constexpr uint32_t kFlagElfLibc6 = 0x0003;
constexpr uint32_t kFlagX8664Lib64 = 0x0300;
constexpr uint32_t kFlagAarch64Lib64 = 0x0a00;

constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
constexpr size_t kOldHeader = 16; // magic[11] + pad + nlibs
constexpr size_t kOldEntry = 12;  // flags, key, value
constexpr size_t kNewHeader = 48;
constexpr size_t kNewEntry = 24; // flags, key, value, osversion, hwcap

uint32_t load_u32(const std::vector<uint8_t> &b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

std::string string_at(const std::vector<uint8_t> &b, size_t at) {
  if (at >= b.size())
    return {};
  const char *p = reinterpret_cast<const char *>(b.data()) + at;
  return std::string(p, strnlen(p, b.size() - at));
}

uint32_t native_flags() {
#if defined(__x86_64__)
  return kFlagElfLibc6 | kFlagX8664Lib64;
#elif defined(__aarch64__)
  return kFlagElfLibc6 | kFlagAarch64Lib64;
#else
  return kFlagElfLibc6;
#endif
}

} // namespace

Result<std::vector<LdCacheEntry>>
parse_ld_cache(const std::vector<uint8_t> &bytes) {
  auto starts_with = [&](size_t at, std::string_view magic) {
    return bytes.size() >= at + magic.size() &&
           std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
  };
  size_t start = 0;
  if (starts_with(0, kOldMagic)) {
    // The old table comes first; the new one follows it, 8-byte aligned.
    if (bytes.size() < kOldHeader)
      return make_error("ld.so.cache: truncated header");
    uint32_t nlibs = load_u32(bytes, 12);
    start = (kOldHeader + size_t{nlibs} * kOldEntry + 7) & ~size_t{7};
  }
  if (!starts_with(start, kNewMagic))
    return make_error("ld.so.cache: unknown format");
  if (bytes.size() < start + kNewHeader)
    return make_error("ld.so.cache: truncated header");
  uint32_t nlibs = load_u32(bytes, start + 20);
  if (bytes.size() < start + kNewHeader + size_t{nlibs} * kNewEntry)
    return make_error("ld.so.cache: truncated table");
  std::vector<LdCacheEntry> entries;
  entries.reserve(nlibs);
  for (uint32_t i = 0; i < nlibs; ++i) {
    size_t at = start + kNewHeader + size_t{i} * kNewEntry;
    // String offsets count from the start of the new-format header.
    entries.push_back(LdCacheEntry{
        .soname = string_at(bytes, start + load_u32(bytes, at + 4)),
        .path = string_at(bytes, start + load_u32(bytes, at + 8)),
        .flags = load_u32(bytes, at),
    });
  }
  return entries;
}

Result<std::vector<LdCacheEntry>> read_ld_cache(const std::string &path) {
  auto text = read_file(path);
  if (!text)
    return make_error(text.error());
  std::vector<uint8_t> bytes(text->begin(), text->end());
  auto entries = parse_ld_cache(bytes);
  if (!entries)
    return make_error(path + ": " + entries.error());
  return entries;
}

std::vector<LdCacheEntry> parse_ldconfig_output(std::string_view text) {
  std::vector<LdCacheEntry> entries;
  while (!text.empty()) {
    auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{}
                                         : text.substr(eol + 1);
    auto arrow = line.find(" => ");
    auto open = line.find(" (");
    if (arrow == std::string_view::npos || open == std::string_view::npos ||
        open > arrow)
      continue;
    auto close = line.find(')', open);
    std::string_view soname = line.substr(0, open);
    while (!soname.empty() && (soname.front() == '\t' || soname.front() == ' '))
      soname.remove_prefix(1);
    std::string_view desc = line.substr(open + 2, close - open - 2);
    uint32_t flags = 0;
    if (desc.starts_with("libc6"))
      flags |= kFlagElfLibc6;
    if (desc.find("x86-64") != std::string_view::npos)
      flags |= kFlagX8664Lib64;
    if (desc.find("AArch64") != std::string_view::npos)
      flags |= kFlagAarch64Lib64;
    entries.push_back(LdCacheEntry{
        .soname = std::string(soname),
        .path = std::string(line.substr(arrow + 4)),
        .flags = flags,
    });
  }
  return entries;
}

bool ld_cache_entry_is_native(const LdCacheEntry &entry) {
  uint32_t want = native_flags();
  // The low byte is the libc type, the next the architecture.
  return (entry.flags & kFlagTypeMask) == (want & kFlagTypeMask) &&
         (entry.flags & 0xff00) == (want & 0xff00);
}

} // namespace ubtrace::runtime::symbols
