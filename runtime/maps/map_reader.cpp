#include "runtime/maps/map_reader.h"

#include "runtime/maps/hash_map.h"
#include "runtime/maps/map_access.h"

#include <algorithm>
#include <cstring>

namespace ubtrace::runtime::maps {
namespace {

const MapHeader *header(const void *map) {
  return static_cast<const MapHeader *>(map);
}

// Slots that may hold values: never more than were ever claimed.
uint32_t slots_in_use(const MapHeader *map) {
  if (!is_per_slot(map->kind))
    return 1;
  const uint32_t used =
      region_of(map)->slot_high_water.load(std::memory_order_acquire);
  return used < map->slot_count ? used : map->slot_count;
}

void copy_values(const MapHeader *map, uint32_t entry, uint32_t slots,
                 uint8_t *out) {
  for (uint32_t s = 0; s < slots; ++s)
    load_shared(out + size_t{s} * map->value_size, value_at(map, entry, s),
                map->value_size);
}

void zero_values(const MapHeader *map, uint32_t entry, uint32_t slots) {
  for (uint32_t s = 0; s < slots; ++s)
    zero_shared(value_at(map, entry, s), map->value_stride);
}

} // namespace

MapInfo map_info(const void *map) {
  if (kind_of(map) == MapKind::RingBuf) {
    const auto *ring = static_cast<const RingHeader *>(map);
    return {MapKind::RingBuf, 0, 0, static_cast<uint32_t>(ring->capacity), 1};
  }
  const MapHeader *m = header(map);
  return {m->kind, m->key_size, m->value_size, m->max_entries, slots_in_use(m)};
}

MapCounters map_counters(const void *map) {
  MapCounters counters;
  if (kind_of(map) == MapKind::RingBuf) {
    // A ring's drops are its lost records (RingConsumer::stats() has more).
    counters.drops = static_cast<const RingHeader *>(map)->lost.load(
        std::memory_order_relaxed);
    return counters;
  }
  const MapHeader *m = header(map);
  counters.entries = is_hash(m->kind) ? m->count.load(std::memory_order_relaxed)
                                      : m->max_entries;
  counters.drops = m->drops.load(std::memory_order_relaxed);
  counters.evictions = m->evictions.load(std::memory_order_relaxed);
  counters.lock_timeouts = m->lock_timeouts.load(std::memory_order_relaxed);
  counters.recoveries = m->recoveries.load(std::memory_order_relaxed);
  return counters;
}

void for_each_entry(const void *map, const EntryVisitor &visit) {
  if (kind_of(map) == MapKind::RingBuf)
    return; // no elements: events go through RingConsumer
  const MapHeader *m = header(map);
  const uint32_t slots = slots_in_use(m);
  std::vector<uint8_t> key(m->key_size);
  std::vector<uint8_t> values(size_t{slots} * m->value_size);
  if (!is_hash(m->kind)) {
    for (uint32_t index = 0; index < m->max_entries; ++index) {
      std::memcpy(key.data(), &index, sizeof index);
      copy_values(m, index, slots, values.data());
      if (!visit(key, values))
        return;
    }
    return;
  }
  const std::atomic<uint64_t> *buckets = buckets_of(m);
  for (uint32_t i = 0; i <= m->bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (!is_live(word))
      continue;
    const uint32_t entry = entry_of(word);
    load_shared(key.data(), key_at(m, entry), m->key_size);
    copy_values(m, entry, slots, values.data());
    // Still the same entry: key and values belong together.
    if (buckets[i].load(std::memory_order_acquire) != word)
      continue;
    if (!visit(key, values))
      return;
  }
}

namespace {

// A scan racing deletes and inserts can meet a key twice (deleted behind the
// scan, inserted again ahead of it): keep the copy seen last.
void drop_duplicate_keys(MapSnapshot &snap) {
  const size_t key_size = snap.info.key_size;
  std::vector<size_t> order(snap.entries);
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  auto key_less = [&](size_t a, size_t b) {
    return std::memcmp(snap.key(a).data(), snap.key(b).data(), key_size) < 0;
  };
  // By key, then by position: copies of one key end up in scan order.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int c = std::memcmp(snap.key(a).data(), snap.key(b).data(), key_size);
    return c < 0 || (c == 0 && a < b);
  });
  std::vector<bool> keep(snap.entries, true);
  bool any = false;
  for (size_t i = 0; i + 1 < order.size(); ++i)
    if (!key_less(order[i], order[i + 1])) {
      keep[order[i]] = false; // a later copy of the same key follows
      any = true;
    }
  if (!any)
    return;
  const size_t value_bytes = size_t{snap.info.slots} * snap.info.value_size;
  size_t out = 0;
  for (size_t i = 0; i < snap.entries; ++i) {
    if (!keep[i])
      continue;
    std::memmove(snap.keys.data() + out * key_size,
                 snap.keys.data() + i * key_size, key_size);
    std::memmove(snap.values.data() + out * value_bytes,
                 snap.values.data() + i * value_bytes, value_bytes);
    ++out;
  }
  snap.entries = out;
  snap.keys.resize(out * key_size);
  snap.values.resize(out * value_bytes);
}

} // namespace

MapSnapshot snapshot(const void *map) {
  MapSnapshot snap;
  snap.info = map_info(map);
  for_each_entry(
      map, [&](std::span<const uint8_t> key, std::span<const uint8_t> values) {
        snap.keys.insert(snap.keys.end(), key.begin(), key.end());
        snap.values.insert(snap.values.end(), values.begin(), values.end());
        ++snap.entries;
        return true;
      });
  if (is_hash(snap.info.kind))
    drop_duplicate_keys(snap);
  return snap;
}

bool read_entry(const void *map, const void *key,
                std::vector<uint8_t> &values) {
  if (kind_of(map) == MapKind::RingBuf)
    return false;
  const MapHeader *m = header(map);
  const uint32_t slots = slots_in_use(m);
  uint32_t entry;
  if (is_hash(m->kind)) {
    const Found found = hash_find(m, key, hash_key(key, m->key_size));
    if (!found)
      return false;
    entry = found.entry;
  } else {
    std::memcpy(&entry, key, sizeof entry);
    if (entry >= m->max_entries)
      return false;
  }
  values.resize(size_t{slots} * m->value_size);
  copy_values(m, entry, slots, values.data());
  return true;
}

void clear_map(void *map) {
  if (kind_of(map) == MapKind::RingBuf)
    return;
  auto *m = static_cast<MapHeader *>(map);
  const uint32_t slots = slots_in_use(m);
  if (!is_hash(m->kind)) {
    for (uint32_t index = 0; index < m->max_entries; ++index)
      zero_values(m, index, slots);
    return;
  }
  std::atomic<uint64_t> *buckets = buckets_of(m);
  for (uint32_t i = 0; i <= m->bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (is_live(word))
      hash_delete_published(m, i, word);
  }
}

void zero_map(void *map) {
  if (kind_of(map) == MapKind::RingBuf)
    return;
  const MapHeader *m = header(map);
  const uint32_t slots = slots_in_use(m);
  if (!is_hash(m->kind)) {
    for (uint32_t index = 0; index < m->max_entries; ++index)
      zero_values(m, index, slots);
    return;
  }
  const std::atomic<uint64_t> *buckets = buckets_of(m);
  for (uint32_t i = 0; i <= m->bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (is_live(word))
      zero_values(m, entry_of(word), slots);
  }
}

} // namespace ubtrace::runtime::maps
