#include "runtime/maps/map_reader.h"

#include "runtime/maps/hash_map.h"
#include "runtime/maps/map_access.h"

#include <algorithm>
#include <cstring>

namespace ubtrace::runtime::maps {
namespace {

// Everything here runs in the CLI on maps the traced process can write
// over: the geometry comes from the CLI's trusted copy (trusted.h), the
// region's words are data (map_access.h checks the entries they name).
MapHeader *header(const TrustedMap &t) {
  return reinterpret_cast<MapHeader *>(t.header);
}

void copy_values(const TrustedMap &t, uint32_t entry, uint32_t slots,
                 uint8_t *out) {
  for (uint32_t s = 0; s < slots; ++s)
    load_shared(out + size_t{s} * t.value_size,
                value_at(t, header(t), entry, s), t.value_size);
}

void zero_values(const TrustedMap &t, uint32_t entry, uint32_t slots) {
  for (uint32_t s = 0; s < slots; ++s)
    zero_shared(value_at(t, header(t), entry, s), t.value_stride);
}

// A counter of the region: 0 (and noted) if written over.
uint64_t counter(const TrustedMap &t, const std::atomic<uint64_t> &word,
                 bool *overwritten) {
  const uint64_t value = word.load(std::memory_order_relaxed);
  if (t.region->plausible_count(value))
    return value;
  t.region->note(Anomaly::Counter);
  *overwritten = true;
  return 0;
}

} // namespace

MapInfo map_info(const void *map) {
  const TrustedMap *t = trusted_map(map);
  if (!t)
    return {};
  if (t->kind == MapKind::RingBuf)
    return {MapKind::RingBuf, 0, 0, static_cast<uint32_t>(t->capacity), 1};
  return {t->kind, t->key_size, t->value_size, t->max_entries,
          slots_in_use(*t, header(*t))};
}

MapCounters map_counters(const void *map) {
  MapCounters counters;
  const TrustedMap *t = trusted_map(map);
  if (!t)
    return counters;
  if (t->kind == MapKind::RingBuf) {
    // A ring's drops are its lost records (RingConsumer::stats() has more).
    counters.drops =
        counter(*t, reinterpret_cast<const RingHeader *>(t->header)->lost,
                &counters.overwritten);
    return counters;
  }
  const MapHeader *m = header(*t);
  counters.entries = t->max_entries;
  if (is_hash(t->kind)) {
    const uint32_t count = m->count.load(std::memory_order_relaxed);
    if (count <= t->max_entries) {
      counters.entries = count;
    } else {
      t->region->note(Anomaly::Counter);
      counters.overwritten = true;
    }
  }
  counters.drops = counter(*t, m->drops, &counters.overwritten);
  counters.evictions = counter(*t, m->evictions, &counters.overwritten);
  counters.lock_timeouts = counter(*t, m->lock_timeouts, &counters.overwritten);
  counters.recoveries = counter(*t, m->recoveries, &counters.overwritten);
  counters.undone = counter(*t, m->undone, &counters.overwritten);
  counters.lock_drops = counter(*t, m->lock_drops, &counters.overwritten);
  counters.slot_drops = counter(*t, m->slot_drops, &counters.overwritten);
  return counters;
}

namespace {

// for_each_entry with `slots` values per entry: the caller's one reading of
// the slots in use (threads claim new slots while a scan runs).
void scan_entries(const TrustedMap *t, uint32_t slots,
                  const EntryVisitor &visit) {
  const MapHeader *m = header(*t);
  std::vector<uint8_t> key(t->key_size);
  std::vector<uint8_t> values(size_t{slots} * t->value_size);
  if (!is_hash(t->kind)) {
    for (uint32_t index = 0; index < t->max_entries; ++index) {
      std::memcpy(key.data(), &index, sizeof index);
      copy_values(*t, index, slots, values.data());
      if (!visit(key, values))
        return;
    }
    return;
  }
  const std::atomic<uint64_t> *buckets = buckets_of(*t, m);
  for (uint32_t i = 0; i <= t->bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (!is_live(word))
      continue;
    const uint32_t entry = live_entry(*t, word);
    if (entry == kNoEntry)
      continue;
    load_shared(key.data(), key_at(*t, m, entry), t->key_size);
    copy_values(*t, entry, slots, values.data());
    // Still the same entry: key and values belong together.
    if (buckets[i].load(std::memory_order_acquire) != word)
      continue;
    if (!visit(key, values))
      return;
  }
}

} // namespace

void for_each_entry(const void *map, const EntryVisitor &visit) {
  const TrustedMap *t = trusted_map(map);
  if (!t || t->kind == MapKind::RingBuf)
    return; // no elements: events go through RingConsumer
  scan_entries(t, slots_in_use(*t, header(*t)), visit);
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
    if (value_bytes != 0) // no slot in use yet: no values at all
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
  const TrustedMap *t = trusted_map(map);
  if (!t || t->kind == MapKind::RingBuf)
    return snap;
  // The values of every entry for the slots info counts: a thread that
  // claims a slot during the scan must not shift the entries' values
  // against info.slots, which value(i, slot) strides by.
  scan_entries(
      t, snap.info.slots,
      [&](std::span<const uint8_t> key, std::span<const uint8_t> values) {
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
  const TrustedMap *t = trusted_map(map);
  if (!t || t->kind == MapKind::RingBuf)
    return false;
  const MapHeader *m = header(*t);
  const uint32_t slots = slots_in_use(*t, m);
  uint32_t entry;
  if (is_hash(t->kind)) {
    const Found found = hash_find(*t, m, key, hash_key(key, t->key_size));
    if (!found)
      return false;
    entry = found.entry;
  } else {
    std::memcpy(&entry, key, sizeof entry);
    if (entry >= t->max_entries)
      return false;
  }
  values.resize(size_t{slots} * t->value_size);
  copy_values(*t, entry, slots, values.data());
  return true;
}

void clear_map(void *map) {
  const TrustedMap *t = trusted_map(map);
  if (!t || t->kind == MapKind::RingBuf)
    return;
  const uint32_t slots = slots_in_use(*t, header(*t));
  if (!is_hash(t->kind)) {
    for (uint32_t index = 0; index < t->max_entries; ++index)
      zero_values(*t, index, slots);
    return;
  }
  std::atomic<uint64_t> *buckets = buckets_of(*t, header(*t));
  for (uint32_t i = 0; i <= t->bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (is_live(word))
      hash_delete_published(*t, i, word);
  }
}

void zero_map(void *map) {
  const TrustedMap *t = trusted_map(map);
  if (!t || t->kind == MapKind::RingBuf)
    return;
  const uint32_t slots = slots_in_use(*t, header(*t));
  if (!is_hash(t->kind)) {
    for (uint32_t index = 0; index < t->max_entries; ++index)
      zero_values(*t, index, slots);
    return;
  }
  const std::atomic<uint64_t> *buckets = buckets_of(*t, header(*t));
  for (uint32_t i = 0; i <= t->bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (!is_live(word))
      continue;
    const uint32_t entry = live_entry(*t, word);
    if (entry != kNoEntry)
      zero_values(*t, entry, slots);
  }
}

} // namespace ubtrace::runtime::maps
