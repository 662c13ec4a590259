// Hashes for caching and naming: a 128-bit content hash of a module image
// (the rewrite cache key: identical modules are rewritten once), and the
// 64-bit FNV-1a of a kernel's mangled name (its id in the probe context).
#pragma once

#include "runtime/gpu/bytes.h"

#include <compare>
#include <cstdint>
#include <string_view>

namespace ubtrace::runtime::gpu {

struct ContentHash {
  uint64_t low = 0;
  uint64_t high = 0;
  uint64_t size = 0; // bytes hashed: cheap extra collision guard
  auto operator<=>(const ContentHash &) const = default;
};

ContentHash hash_content(Bytes data);

// Mixes `more` into `hash` (e.g. the probe program the image is rewritten
// with), so one cache can serve several probe programs.
ContentHash combine(ContentHash hash, ContentHash more);

constexpr uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

struct ContentHashHasher {
  size_t operator()(const ContentHash &h) const {
    return static_cast<size_t>(h.low ^ (h.high * 0x9e3779b97f4a7c15ull));
  }
};

} // namespace ubtrace::runtime::gpu
