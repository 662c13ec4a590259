// Moving bytes in and out of shared memory that other threads and processes
// read and write at the same time. The shared side is always 8-byte aligned
// (keys and values have 8-byte strides) and is accessed in whole words with
// relaxed atomics, so a concurrent reader never sees a torn word; the private
// side may have any alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ubtrace::runtime::maps {

inline uint64_t load_unaligned_word(const void *p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

inline void store_shared(void *shared, const void *src, size_t bytes) {
  auto *dst = static_cast<uint64_t *>(shared);
  const auto *from = static_cast<const unsigned char *>(src);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8)
    __atomic_store_n(dst + i / 8, load_unaligned_word(from + i),
                     __ATOMIC_RELAXED);
  auto *tail = static_cast<unsigned char *>(shared);
  for (; i < bytes; ++i)
    __atomic_store_n(tail + i, from[i], __ATOMIC_RELAXED);
}

inline void load_shared(void *dst, const void *shared, size_t bytes) {
  const auto *src = static_cast<const uint64_t *>(shared);
  auto *to = static_cast<unsigned char *>(dst);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const uint64_t word = __atomic_load_n(src + i / 8, __ATOMIC_RELAXED);
    std::memcpy(to + i, &word, sizeof word);
  }
  const auto *tail = static_cast<const unsigned char *>(shared);
  for (; i < bytes; ++i)
    to[i] = __atomic_load_n(tail + i, __ATOMIC_RELAXED);
}

// bytes is a multiple of 8 (a stride).
inline void zero_shared(void *shared, size_t bytes) {
  auto *dst = static_cast<uint64_t *>(shared);
  for (size_t i = 0; i < bytes / 8; ++i)
    __atomic_store_n(dst + i, uint64_t{0}, __ATOMIC_RELAXED);
}

inline bool equals_shared(const void *shared, const void *key, size_t bytes) {
  const auto *words = static_cast<const uint64_t *>(shared);
  const auto *other = static_cast<const unsigned char *>(key);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8)
    if (__atomic_load_n(words + i / 8, __ATOMIC_RELAXED) !=
        load_unaligned_word(other + i))
      return false;
  const auto *tail = static_cast<const unsigned char *>(shared);
  for (; i < bytes; ++i)
    if (__atomic_load_n(tail + i, __ATOMIC_RELAXED) != other[i])
      return false;
  return true;
}

// Key hashing: a 64-bit finaliser (good avalanche, a few cycles) per word.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

inline uint64_t hash_key(const void *key, uint32_t size) {
  const auto *p = static_cast<const unsigned char *>(key);
  if (size == 8)
    return mix64(load_unaligned_word(p));
  uint64_t h = 0x9e3779b97f4a7c15ull ^ size;
  for (; size >= 8; size -= 8, p += 8)
    h = mix64(h ^ load_unaligned_word(p));
  if (size > 0) {
    // Byte by byte: a variable-size memcpy would be a libc call on the
    // probe path (runtime/probe_safe.h).
    uint64_t tail = 0;
    for (uint32_t i = 0; i < size; ++i)
      tail |= uint64_t{p[i]} << (8 * i);
    h = mix64(h ^ tail ^ (uint64_t{size} << 56));
  }
  return h;
}

} // namespace ubtrace::runtime::maps
