// The dynamic loader's library cache (/etc/ld.so.cache, written by
// ldconfig): which file ld.so loads for a soname. Read directly from the
// binary format ("glibc-ld.so.cache1.1", alone or after the old
// "ld.so-1.7.0" table), with `ldconfig -p` output as a fallback parser.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::symbols {

struct LdCacheEntry {
  std::string soname; // "libc.so.6"
  std::string path;   // "/lib/x86_64-linux-gnu/libc.so.6"
  uint32_t flags = 0; // FLAG_ELF_LIBC6 | FLAG_X8664_LIB64, ...
};

inline constexpr const char *kLdCachePath = "/etc/ld.so.cache";

// Entries in cache order (ld.so takes the first that fits).
Result<std::vector<LdCacheEntry>>
read_ld_cache(const std::string &path = kLdCachePath);
Result<std::vector<LdCacheEntry>>
parse_ld_cache(const std::vector<uint8_t> &bytes);
// `ldconfig -p` lines: "\tlibc.so.6 (libc6,x86-64) => /lib/.../libc.so.6".
// The flags are rebuilt from the parenthesised description.
std::vector<LdCacheEntry> parse_ldconfig_output(std::string_view text);

// Whether an entry is for this process's ABI (x86-64 libraries on x86-64,
// not the lib32 ones).
bool ld_cache_entry_is_native(const LdCacheEntry &entry);

} // namespace ubtrace::runtime::symbols
