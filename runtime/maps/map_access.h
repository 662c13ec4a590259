// Addressing inside one map, and the lock-free lookups of the probe hot path
// (inline: a probe doing `@[tid] = count()` runs these on every event).
#pragma once

#include "runtime/maps/format.h"
#include "runtime/maps/shared_words.h"
#include "runtime/maps/thread_slot.h"

#include <atomic>
#include <cstdint>

namespace ubtrace::runtime::maps {

inline std::atomic<uint64_t> *buckets_of(const MapHeader *map) {
  return at_offset<std::atomic<uint64_t>>(map, map->buckets_offset);
}
inline EntryMeta *meta_of(const MapHeader *map) {
  return at_offset<EntryMeta>(map, map->meta_offset);
}
inline char *key_at(const MapHeader *map, uint32_t entry) {
  return at_offset<char>(map,
                         map->keys_offset + uint64_t{entry} * map->key_stride);
}
inline char *value_at(const MapHeader *map, uint32_t entry, uint32_t slot) {
  return at_offset<char>(map, map->values_offset + slot * map->slot_stride +
                                  uint64_t{entry} * map->value_stride);
}

inline uint64_t bucket_word(uint64_t hash, uint32_t entry) {
  return (hash & 0xffffffff00000000ull) | (uint64_t{entry} + 1);
}
inline bool is_live(uint64_t word) {
  return word != kBucketEmpty && word != kBucketTombstone;
}
inline uint32_t entry_of(uint64_t word) {
  return static_cast<uint32_t>(word) - 1;
}

struct Found {
  uint32_t entry = kNoEntry;
  uint32_t bucket = 0;
  uint64_t word = 0;
  explicit operator bool() const { return entry != kNoEntry; }
};

// Lock-free. A bucket is published (release) only after its key and value
// are written, so the acquire load here never leads to a half-written key.
// The bucket is read again after the key compare: if it changed meanwhile the
// entry may have been deleted and reused for another key, whose bytes the
// compare may have seen half written.
inline Found hash_find(const MapHeader *map, const void *key, uint64_t hash) {
  const std::atomic<uint64_t> *buckets = buckets_of(map);
  const uint32_t mask = map->bucket_mask;
  const uint64_t tag = hash & 0xffffffff00000000ull;
  uint32_t i = static_cast<uint32_t>(hash) & mask;
  for (uint32_t probes = 0; probes <= mask; ++probes, i = (i + 1) & mask) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (word == kBucketEmpty)
      break;
    if ((word & 0xffffffff00000000ull) != tag || word == kBucketTombstone)
      continue;
    const uint32_t entry = entry_of(word);
    if (equals_shared(key_at(map, entry), key, map->key_size) &&
        buckets[i].load(std::memory_order_acquire) == word)
      return {entry, i, word};
  }
  return {};
}

inline void mark_referenced(const MapHeader *map, uint32_t entry) {
  std::atomic<uint8_t> &referenced = meta_of(map)[entry].referenced;
  // Read first: writing a line every lookup would bounce it between cores.
  if (referenced.load(std::memory_order_relaxed) == 0)
    referenced.store(1, std::memory_order_relaxed);
}

// The calling thread's value for key, or nullptr.
inline void *hash_lookup(const MapHeader *map, const void *key) {
  const Found found = hash_find(map, key, hash_key(key, map->key_size));
  if (!found)
    return nullptr;
  if (is_lru(map->kind))
    mark_referenced(map, found.entry);
  if (!is_per_slot(map->kind))
    return value_at(map, found.entry, 0);
  const uint32_t slot = thread_slot(map);
  if (slot == kNoSlot)
    return nullptr;
  return value_at(map, found.entry, slot);
}

inline void *array_lookup(const MapHeader *map, const void *key) {
  uint32_t index;
  std::memcpy(&index, key, sizeof index);
  if (index >= map->max_entries)
    return nullptr;
  if (map->kind == MapKind::Array)
    return value_at(map, index, 0);
  const uint32_t slot = thread_slot(map);
  if (slot == kNoSlot)
    return nullptr;
  return value_at(map, index, slot);
}

} // namespace ubtrace::runtime::maps
