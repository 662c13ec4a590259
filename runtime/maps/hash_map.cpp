#include "runtime/maps/hash_map.h"

#include "runtime/maps/map_access.h"
#include "runtime/maps/map_lock.h"

#include <cerrno>

namespace ubtrace::runtime::maps {
namespace {

// pending_state: how far the lock holder's insert got, for recovery.
constexpr uint32_t kPendingPopped = 1;  // entry taken, count not raised
constexpr uint32_t kPendingCounted = 2; // count includes the entry

void push_free(MapHeader *map, uint32_t entry) {
  EntryMeta *meta = meta_of(map);
  uint32_t head = map->free_head.load(std::memory_order_relaxed);
  do {
    meta[entry].next_free.store(head, std::memory_order_relaxed);
  } while (!map->free_head.compare_exchange_weak(
      head, entry, std::memory_order_release, std::memory_order_relaxed));
}

// Lock held: the only popper.
uint32_t pop_free(MapHeader *map) {
  EntryMeta *meta = meta_of(map);
  uint32_t head = map->free_head.load(std::memory_order_acquire);
  while (head != kNoEntry) {
    const uint32_t next = meta[head].next_free.load(std::memory_order_relaxed);
    if (map->free_head.compare_exchange_weak(head, next,
                                             std::memory_order_acquire))
      return head;
  }
  if (map->bump < map->max_entries)
    return map->bump++;
  return kNoEntry;
}

// Lock held. Linear probing needs no tombstones before an empty bucket: a
// chain that crossed them would have crossed the empty bucket, which no chain
// does. Walking backwards from an empty bucket turns every tombstone run that
// ends at an empty bucket into empty buckets; lock-free readers stay right
// because no key lies beyond those runs, and deleters only turn live buckets
// into tombstones, which this treats as live.
void sweep_tombstones(MapHeader *map) {
  std::atomic<uint64_t> *buckets = buckets_of(map);
  const uint32_t mask = map->bucket_mask;
  uint32_t anchor = 0;
  while (anchor <= mask &&
         buckets[anchor].load(std::memory_order_acquire) != kBucketEmpty)
    ++anchor;
  if (anchor > mask)
    return;
  bool next_empty = true;
  for (uint32_t n = 1; n <= mask; ++n) {
    const uint32_t i = (anchor - n) & mask;
    uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (word == kBucketEmpty) {
      next_empty = true;
    } else if (word == kBucketTombstone && next_empty) {
      if (buckets[i].compare_exchange_strong(word, kBucketEmpty,
                                             std::memory_order_release))
        map->tombstones.fetch_sub(1, std::memory_order_relaxed);
    } else {
      next_empty = false;
    }
  }
  map->sweep_floor.store(map->tombstones.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
}

bool sweep_due(const MapHeader *map) {
  return map->tombstones.load(std::memory_order_relaxed) >
         map->sweep_floor.load(std::memory_order_relaxed) +
             (map->bucket_mask + 1) / 8;
}

// Lock held, after OWNER_DIED: undo the dead holder's half-done insert.
void recover(MapHeader *map) {
  map->recoveries.fetch_add(1, std::memory_order_relaxed);
  const uint32_t entry = map->pending_entry;
  const uint32_t state = map->pending_state;
  map->pending_entry = kNoEntry;
  map->pending_state = 0;
  if (entry >= map->max_entries || state == 0)
    return;
  const uint32_t bucket = meta_of(map)[entry].bucket;
  const bool published = bucket <= map->bucket_mask &&
                         static_cast<uint32_t>(buckets_of(map)[bucket].load(
                             std::memory_order_acquire)) == entry + 1;
  if (published)
    return;
  if (state == kPendingCounted)
    map->count.fetch_sub(1, std::memory_order_relaxed);
  push_free(map, entry);
}

// Lock held, map full: a victim by the clock algorithm (LRU kinds).
uint32_t evict(MapHeader *map) {
  std::atomic<uint64_t> *buckets = buckets_of(map);
  EntryMeta *meta = meta_of(map);
  const uint32_t max = map->max_entries;
  for (uint64_t n = 0; n < 2ull * max + 1; ++n) {
    const uint32_t entry = map->lru_hand;
    map->lru_hand = entry + 1 == max ? 0 : entry + 1;
    if (entry >= map->bump)
      continue;
    const uint32_t bucket = meta[entry].bucket;
    if (bucket > map->bucket_mask)
      continue;
    uint64_t word = buckets[bucket].load(std::memory_order_acquire);
    if (!is_live(word) || entry_of(word) != entry)
      continue;
    if (meta[entry].referenced.load(std::memory_order_relaxed) != 0) {
      meta[entry].referenced.store(0, std::memory_order_relaxed);
      continue;
    }
    // Racing a lock-free delete of the same entry: whoever swaps the bucket
    // owns the entry.
    if (buckets[bucket].compare_exchange_strong(word, kBucketTombstone,
                                                std::memory_order_acq_rel)) {
      map->tombstones.fetch_add(1, std::memory_order_relaxed);
      map->evictions.fetch_add(1, std::memory_order_relaxed);
      return entry;
    }
  }
  return kNoEntry;
}

// Writes the new entry's values: the caller's slot gets the value, the other
// slots (of a recycled entry) are zeroed. Slots at or above the high-water
// mark were never written, for any entry.
void write_new_values(MapHeader *map, uint32_t entry, uint32_t slot,
                      const void *value) {
  if (!is_per_slot(map->kind)) {
    store_shared(value_at(map, entry, 0), value, map->value_size);
    return;
  }
  const uint32_t used =
      region_of(map)->slot_high_water.load(std::memory_order_acquire);
  for (uint32_t s = 0; s < used && s < map->slot_count; ++s)
    if (s != slot)
      zero_shared(value_at(map, entry, s), map->value_stride);
  store_shared(value_at(map, entry, slot), value, map->value_size);
}

void store_existing(MapHeader *map, uint32_t entry, uint32_t slot,
                    const void *value) {
  if (is_lru(map->kind))
    mark_referenced(map, entry);
  store_shared(value_at(map, entry, slot), value, map->value_size);
}

struct Placement {
  Found existing;
  uint32_t free_bucket = kNoEntry;
  bool free_is_tombstone = false;
};

// Lock held: no other inserter, so the first free bucket of the chain stays
// free until this holder publishes into it.
Placement place(const MapHeader *map, const void *key, uint64_t hash) {
  const std::atomic<uint64_t> *buckets = buckets_of(map);
  const uint32_t mask = map->bucket_mask;
  Placement placement;
  uint32_t i = static_cast<uint32_t>(hash) & mask;
  for (uint32_t probes = 0; probes <= mask; ++probes, i = (i + 1) & mask) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (word == kBucketEmpty) {
      if (placement.free_bucket == kNoEntry)
        placement.free_bucket = i;
      break;
    }
    if (word == kBucketTombstone) {
      if (placement.free_bucket == kNoEntry) {
        placement.free_bucket = i;
        placement.free_is_tombstone = true;
      }
      continue;
    }
    if ((word >> 32) == (hash >> 32) &&
        equals_shared(key_at(map, entry_of(word)), key, map->key_size)) {
      placement.existing = {entry_of(word), i, word};
      break;
    }
  }
  return placement;
}

long drop(MapHeader *map, long error) {
  map->drops.fetch_add(1, std::memory_order_relaxed);
  return error;
}

// A waiter for the insert lock whose key another thread inserted meanwhile
// needs the lock no more: thousands of threads whose first hit makes the
// same few keys (the first update of a per-thread map) then leave instead
// of taking the lock one after another, which on a busy machine outlasted
// the timeout and dropped their updates.
struct InsertWait {
  const MapHeader *map;
  const void *key;
  uint64_t hash;
};

bool key_appeared(void *context) {
  const auto *wait = static_cast<const InsertWait *>(context);
  return bool(hash_find(wait->map, wait->key, wait->hash));
}

long update_existing(MapHeader *map, const Found &found, uint32_t slot,
                     const void *value, uint64_t flags) {
  if (flags == kBpfNoExist)
    return -EEXIST;
  store_existing(map, found.entry, slot, value);
  return 0;
}

long insert(MapHeader *map, const void *key, uint64_t hash, const void *value,
            uint32_t slot, uint64_t flags) {
  InsertWait wait{map, key, hash};
  const LockResult locked =
      lock_map(map, kInsertLockTimeoutNs, key_appeared, &wait);
  switch (locked) {
  case LockResult::Acquired:
    break;
  case LockResult::OwnerDied:
    recover(map);
    break;
  case LockResult::Abandoned:
    if (const Found found = hash_find(map, key, hash))
      return update_existing(map, found, slot, value, flags);
    return drop(map, -EBUSY); // deleted again meanwhile: cannot happen here
  case LockResult::TimedOut:
    map->lock_timeouts.fetch_add(1, std::memory_order_relaxed);
    return drop(map, -EBUSY);
  case LockResult::Failed:
    return drop(map, -EBUSY);
  }

  long result = 0;
  const Placement placement = place(map, key, hash);
  if (placement.existing) {
    if (flags == kBpfNoExist)
      result = -EEXIST;
    else
      store_existing(map, placement.existing.entry, slot, value);
  } else if (placement.free_bucket == kNoEntry) {
    result = drop(map, -E2BIG); // no free bucket: cannot happen at half load
  } else {
    uint32_t entry = kNoEntry;
    uint32_t state = kPendingPopped;
    if (map->count.load(std::memory_order_relaxed) < map->max_entries)
      entry = pop_free(map);
    if (entry == kNoEntry && is_lru(map->kind)) {
      entry = evict(map);
      state = kPendingCounted; // the victim was counted
    }
    if (entry == kNoEntry) {
      result = drop(map, -E2BIG);
    } else {
      map->pending_entry = entry;
      map->pending_state = state;
      store_shared(key_at(map, entry), key, map->key_size);
      write_new_values(map, entry, slot, value);
      EntryMeta &meta = meta_of(map)[entry];
      meta.bucket = placement.free_bucket;
      meta.referenced.store(1, std::memory_order_relaxed);
      if (state == kPendingPopped) {
        map->count.fetch_add(1, std::memory_order_relaxed);
        map->pending_state = kPendingCounted;
      }
      if (placement.free_is_tombstone)
        map->tombstones.fetch_sub(1, std::memory_order_relaxed);
      buckets_of(map)[placement.free_bucket].store(bucket_word(hash, entry),
                                                   std::memory_order_release);
      map->pending_entry = kNoEntry;
      map->pending_state = 0;
    }
  }
  if (sweep_due(map))
    sweep_tombstones(map);
  unlock_map(map);
  return result;
}

} // namespace

void init_hash_map(MapHeader &map) {
  map.free_head.store(kNoEntry, std::memory_order_relaxed);
  map.bump = 0;
  map.lru_hand = 0;
  map.pending_entry = kNoEntry;
  map.pending_state = 0;
  map.sweep_floor.store(0, std::memory_order_relaxed);
}

long hash_update(MapHeader *map, const void *key, const void *value,
                 uint64_t flags) {
  if (flags > kBpfExist)
    return -EINVAL;
  uint32_t slot = 0;
  if (is_per_slot(map->kind)) {
    slot = thread_slot(map);
    if (slot == kNoSlot)
      return drop(map, -E2BIG);
  }
  const uint64_t hash = hash_key(key, map->key_size);
  if (const Found found = hash_find(map, key, hash))
    return update_existing(map, found, slot, value, flags);
  if (flags == kBpfExist)
    return -ENOENT;
  return insert(map, key, hash, value, slot, flags);
}

bool hash_delete_published(MapHeader *map, uint32_t bucket, uint64_t word) {
  if (!buckets_of(map)[bucket].compare_exchange_strong(
          word, kBucketTombstone, std::memory_order_acq_rel))
    return false;
  map->tombstones.fetch_add(1, std::memory_order_relaxed);
  push_free(map, entry_of(word));
  map->count.fetch_sub(1, std::memory_order_relaxed);
  // Sweep only if nobody holds the lock: a delete never waits.
  if (sweep_due(map) && acquired(try_lock_map(map))) {
    sweep_tombstones(map);
    unlock_map(map);
  }
  return true;
}

long hash_delete(MapHeader *map, const void *key) {
  const uint64_t hash = hash_key(key, map->key_size);
  for (;;) {
    const Found found = hash_find(map, key, hash);
    if (!found)
      return -ENOENT;
    if (hash_delete_published(map, found.bucket, found.word))
      return 0;
  }
}

long hash_for_each(MapHeader *map, MapElemCallback callback, void *context) {
  uint32_t slot = 0;
  if (is_per_slot(map->kind)) {
    slot = thread_slot(map);
    if (slot == kNoSlot)
      return 0;
  }
  const std::atomic<uint64_t> *buckets = buckets_of(map);
  long visited = 0;
  for (uint32_t i = 0; i <= map->bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (!is_live(word))
      continue;
    const uint32_t entry = entry_of(word);
    ++visited;
    if (callback(map, key_at(map, entry), value_at(map, entry, slot),
                 context) != 0)
      break;
  }
  return visited;
}

} // namespace ubtrace::runtime::maps
