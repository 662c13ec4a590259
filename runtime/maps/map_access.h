// Addressing inside one map, and the lock-free lookups of the probe hot path
// (inline: a probe doing `@[tid] = count()` runs these on every event).
//
// Every function takes the map's geometry `g` apart from the header `m`
// whose mutable words it uses: on the probe path g is the header itself
// (`*m`), on the CLI's side the copy it trusts (trusted.h), so that nothing
// the traced process writes into the region can move the CLI's reads and
// writes outside the map. Indexes read from shared words (a bucket's entry)
// are checked against g before use, on both sides.
#pragma once

#include "runtime/maps/format.h"
#include "runtime/maps/shared_words.h"
#include "runtime/maps/thread_slot.h"
#include "runtime/maps/trusted.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace ubtrace::runtime::maps {

template <class G>
std::atomic<uint64_t> *buckets_of(const G &g, const MapHeader *m) {
  return at_offset<std::atomic<uint64_t>>(m, g.buckets_offset);
}
template <class G> EntryMeta *meta_of(const G &g, const MapHeader *m) {
  return at_offset<EntryMeta>(m, g.meta_offset);
}
template <class G>
char *key_at(const G &g, const MapHeader *m, uint32_t entry) {
  return at_offset<char>(m, g.keys_offset + uint64_t{entry} * g.key_stride);
}
template <class G>
char *value_at(const G &g, const MapHeader *m, uint32_t entry, uint32_t slot) {
  return at_offset<char>(m, g.values_offset + slot * g.slot_stride +
                                uint64_t{entry} * g.value_stride);
}

inline std::atomic<uint64_t> *buckets_of(const MapHeader *map) {
  return buckets_of(*map, map);
}
inline EntryMeta *meta_of(const MapHeader *map) {
  return meta_of(*map, map);
}
inline char *key_at(const MapHeader *map, uint32_t entry) {
  return key_at(*map, map, entry);
}
inline char *value_at(const MapHeader *map, uint32_t entry, uint32_t slot) {
  return value_at(*map, map, entry, slot);
}

// The region a map lives in, and what to do with something that does not
// add up: the probe path trusts its header; the CLI notes it (trusted.h).
inline RegionHeader *region_header(const MapHeader &g, const MapHeader *) {
  return region_of(&g);
}
inline RegionHeader *region_header(const TrustedMap &g, const MapHeader *) {
  return reinterpret_cast<RegionHeader *>(g.region->base);
}
inline void note_anomaly(const MapHeader &, Anomaly) {}
inline void note_anomaly(const TrustedMap &g, Anomaly kind) {
  g.region->note(kind);
}

// Slots that may hold values: never more than were ever claimed.
inline uint32_t slots_in_use(const MapHeader &g, const MapHeader *m) {
  if (!is_per_slot(g.kind))
    return 1;
  return std::min(
      region_header(g, m)->slot_high_water.load(std::memory_order_acquire),
      g.slot_count);
}
inline uint32_t slots_in_use(const TrustedMap &g, const MapHeader *) {
  return is_per_slot(g.kind) ? g.region->slots_used(g.slot_count) : 1;
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
// The entry a live bucket word names, if the map has it; else kNoEntry
// (the word was written over).
template <class G> uint32_t live_entry(const G &g, uint64_t word) {
  const uint32_t entry = entry_of(word);
  if (entry < g.max_entries) [[likely]]
    return entry;
  note_anomaly(g, Anomaly::Entry);
  return kNoEntry;
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
template <class G>
Found hash_find(const G &g, const MapHeader *m, const void *key,
                uint64_t hash) {
  const std::atomic<uint64_t> *buckets = buckets_of(g, m);
  const uint32_t mask = g.bucket_mask;
  const uint64_t tag = hash & 0xffffffff00000000ull;
  uint32_t i = static_cast<uint32_t>(hash) & mask;
  for (uint32_t probes = 0; probes <= mask; ++probes, i = (i + 1) & mask) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (word == kBucketEmpty)
      break;
    if ((word & 0xffffffff00000000ull) != tag || word == kBucketTombstone)
      continue;
    const uint32_t entry = live_entry(g, word);
    if (entry == kNoEntry)
      continue;
    if (equals_shared(key_at(g, m, entry), key, g.key_size) &&
        buckets[i].load(std::memory_order_acquire) == word)
      return {entry, i, word};
  }
  return {};
}
inline Found hash_find(const MapHeader *map, const void *key, uint64_t hash) {
  return hash_find(*map, map, key, hash);
}

template <class G>
void mark_referenced(const G &g, const MapHeader *m, uint32_t entry) {
  std::atomic<uint8_t> &referenced = meta_of(g, m)[entry].referenced;
  // Read first: writing a line every lookup would bounce it between cores.
  if (referenced.load(std::memory_order_relaxed) == 0)
    referenced.store(1, std::memory_order_relaxed);
}

// The value of key in the caller's slot, or nullptr. `slot()` names the
// caller's slot (kNoSlot: it has none); called only for per-slot kinds, so
// a thread claims a slot only when it needs one.
template <class G, class SlotFn>
void *hash_lookup_in(const G &g, const MapHeader *m, const void *key,
                     SlotFn slot) {
  const Found found = hash_find(g, m, key, hash_key(key, g.key_size));
  if (!found)
    return nullptr;
  if (is_lru(g.kind))
    mark_referenced(g, m, found.entry);
  if (!is_per_slot(g.kind))
    return value_at(g, m, found.entry, 0);
  const uint32_t mine = slot();
  if (mine == kNoSlot)
    return nullptr;
  return value_at(g, m, found.entry, mine);
}

template <class G, class SlotFn>
void *array_lookup_in(const G &g, const MapHeader *m, const void *key,
                      SlotFn slot) {
  uint32_t index;
  std::memcpy(&index, key, sizeof index);
  if (index >= g.max_entries)
    return nullptr;
  if (g.kind == MapKind::Array)
    return value_at(g, m, index, 0);
  const uint32_t mine = slot();
  if (mine == kNoSlot)
    return nullptr;
  return value_at(g, m, index, mine);
}

// The calling thread's value for key, or nullptr.
inline void *hash_lookup(const MapHeader *map, const void *key) {
  return hash_lookup_in(*map, map, key, [map] { return thread_slot(map); });
}

inline void *array_lookup(const MapHeader *map, const void *key) {
  return array_lookup_in(*map, map, key, [map] { return thread_slot(map); });
}

} // namespace ubtrace::runtime::maps
