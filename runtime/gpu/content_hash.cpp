#include "runtime/gpu/content_hash.h"

namespace ubtrace::runtime::gpu {
namespace {

// Two independent 64-bit lanes over 8-byte words, each a multiply-xorshift
// chain with its own odd constant, finished with a strong avalanche. Not
// cryptographic: the cache key only has to tell apart the modules one
// process loads.
constexpr uint64_t kLaneA = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kLaneB = 0xc2b2ae3d27d4eb4full;

constexpr uint64_t mix(uint64_t h, uint64_t word, uint64_t k) {
  h ^= word * k;
  h = (h << 27) | (h >> 37);
  return h * k + 0x52dce729ull;
}

constexpr uint64_t finish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

} // namespace

ContentHash hash_content(Bytes data) {
  uint64_t a = 0x243f6a8885a308d3ull ^ data.size();
  uint64_t b = 0x13198a2e03707344ull + data.size();
  size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    uint64_t word = load_le<uint64_t>(data.data() + i);
    a = mix(a, word, kLaneA);
    b = mix(b, word ^ (word >> 29), kLaneB);
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < data.size(); ++k)
    tail |= uint64_t{data[i + k]} << (8 * k);
  a = mix(a, tail, kLaneA);
  b = mix(b, tail ^ 0xa5a5a5a5a5a5a5a5ull, kLaneB);
  return ContentHash{finish(a ^ (b >> 1)), finish(b + a), data.size()};
}

ContentHash combine(ContentHash hash, ContentHash more) {
  return ContentHash{finish(mix(hash.low, more.low, kLaneA)),
                     finish(mix(hash.high, more.high, kLaneB)),
                     hash.size + more.size};
}

} // namespace ubtrace::runtime::gpu
