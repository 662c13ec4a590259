#include "runtime/maps/hash_map.h"

#include "runtime/maps/actor.h"
#include "runtime/maps/map_access.h"
#include "runtime/maps/map_lock.h"

#include <cerrno>

namespace ubtrace::runtime::maps {
namespace {

// pending_state: how far the lock holder's insert got, for recovery.
constexpr uint32_t kPendingPopped = 1;  // entry taken, count not raised
constexpr uint32_t kPendingCounted = 2; // count includes the entry

// Compare-and-swap loops on shared words give up after this many failures:
// a word that another process keeps rewriting must not hold anyone forever
// (each failure means somebody else changed the word; real contention never
// gets near this).
constexpr int kMaxCasFailures = 1 << 12;

// One operation on one map: where its geometry comes from (G: the header
// itself on the probe path, the CLI's trusted copy), its header in this
// process, and who runs it (actor.h).
template <class G, class Actor> struct Op {
  const G &g;
  MapHeader *m;
  const Actor &actor;
};

// The CLI stops waiting for an insert lock that timed out once: a holder
// that never lets go (written over, or stopped) would cost every insert the
// full timeout.
inline bool lock_abandoned(const MapHeader &) {
  return false;
}
inline bool lock_abandoned(const TrustedMap &g) {
  return g.lock_given_up.load(std::memory_order_relaxed);
}
inline void lock_timed_out(const MapHeader &) {}
inline void lock_timed_out(const TrustedMap &g) {
  const_cast<TrustedMap &>(g).lock_given_up.store(true,
                                                  std::memory_order_relaxed);
  g.region->note(Anomaly::LockHolder);
}

template <class G, class A> void push_free(const Op<G, A> &op, uint32_t entry) {
  EntryMeta *meta = meta_of(op.g, op.m);
  uint32_t head = op.m->free_head.load(std::memory_order_relaxed);
  for (int failures = 0; failures < kMaxCasFailures; ++failures) {
    meta[entry].next_free.store(head, std::memory_order_relaxed);
    if (op.m->free_head.compare_exchange_weak(
            head, entry, std::memory_order_release, std::memory_order_relaxed))
      return;
  }
  note_anomaly(op.g, Anomaly::GaveUp); // the entry leaks
}

// Lock held: the only popper. Free-list links are shared words: one that
// names no entry ends the list (the rest leaks). `fresh`: the entry was
// never used, so its values are all still zero.
template <class G, class A> uint32_t pop_free(const Op<G, A> &op, bool &fresh) {
  fresh = false;
  EntryMeta *meta = meta_of(op.g, op.m);
  uint32_t head = op.m->free_head.load(std::memory_order_acquire);
  for (int failures = 0; head != kNoEntry && failures < kMaxCasFailures;
       ++failures) {
    if (head >= op.g.max_entries) {
      note_anomaly(op.g, Anomaly::Entry);
      break;
    }
    const uint32_t next = meta[head].next_free.load(std::memory_order_relaxed);
    if (op.m->free_head.compare_exchange_weak(head, next,
                                              std::memory_order_acquire))
      return head;
  }
  const uint32_t bump = op.m->bump;
  if (bump < op.g.max_entries) {
    op.m->bump = bump + 1;
    fresh = true;
    return bump;
  }
  return kNoEntry;
}

// Lock held. Linear probing needs no tombstones before an empty bucket: a
// chain that crossed them would have crossed the empty bucket, which no chain
// does. Walking backwards from an empty bucket turns every tombstone run that
// ends at an empty bucket into empty buckets; lock-free readers stay right
// because no key lies beyond those runs, and deleters only turn live buckets
// into tombstones, which this treats as live.
template <class G, class A> void sweep_tombstones(const Op<G, A> &op) {
  std::atomic<uint64_t> *buckets = buckets_of(op.g, op.m);
  const uint32_t mask = op.g.bucket_mask;
  uint32_t anchor = 0;
  while (anchor <= mask &&
         buckets[anchor].load(std::memory_order_acquire) != kBucketEmpty)
    ++anchor;
  if (anchor > mask)
    return;
  bool next_empty = true;
  for (uint32_t n = 1; n <= mask; ++n) {
    if (n % 1024 == 0)
      note_insert_progress(op.m);
    const uint32_t i = (anchor - n) & mask;
    uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (word == kBucketEmpty) {
      next_empty = true;
    } else if (word == kBucketTombstone && next_empty) {
      if (buckets[i].compare_exchange_strong(word, kBucketEmpty,
                                             std::memory_order_release))
        op.m->tombstones.fetch_sub(1, std::memory_order_relaxed);
    } else {
      next_empty = false;
    }
  }
  op.m->sweep_floor.store(op.m->tombstones.load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
}

template <class G, class A> bool sweep_due(const Op<G, A> &op) {
  return op.m->tombstones.load(std::memory_order_relaxed) >
         op.m->sweep_floor.load(std::memory_order_relaxed) +
             (op.g.bucket_mask + 1) / 8;
}

// Lock held, after OWNER_DIED: undo the dead holder's half-done insert.
template <class G, class A> void recover(const Op<G, A> &op) {
  op.m->recoveries.fetch_add(1, std::memory_order_relaxed);
  const uint32_t entry = op.m->pending_entry;
  const uint32_t state = op.m->pending_state;
  op.m->pending_entry = kNoEntry;
  op.m->pending_state = 0;
  if (entry >= op.g.max_entries || state == 0)
    return;
  const uint32_t bucket = meta_of(op.g, op.m)[entry].bucket;
  const bool published =
      bucket <= op.g.bucket_mask &&
      static_cast<uint32_t>(buckets_of(op.g, op.m)[bucket].load(
          std::memory_order_acquire)) == entry + 1;
  if (published)
    return;
  op.m->undone.fetch_add(1, std::memory_order_relaxed); // its update is lost
  if (state == kPendingCounted)
    op.m->count.fetch_sub(1, std::memory_order_relaxed);
  push_free(op, entry);
}

// Lock held, map full: a victim by the clock algorithm (LRU kinds).
template <class G, class A> uint32_t evict(const Op<G, A> &op) {
  std::atomic<uint64_t> *buckets = buckets_of(op.g, op.m);
  EntryMeta *meta = meta_of(op.g, op.m);
  const uint32_t max = op.g.max_entries;
  for (uint64_t n = 0; n < 2ull * max + 1; ++n) {
    if (n % 1024 == 0)
      note_insert_progress(op.m);
    uint32_t entry = op.m->lru_hand;
    if (entry >= max) {
      note_anomaly(op.g, Anomaly::Entry);
      entry = 0;
    }
    op.m->lru_hand = entry + 1 == max ? 0 : entry + 1;
    if (entry >= op.m->bump)
      continue;
    const uint32_t bucket = meta[entry].bucket;
    if (bucket > op.g.bucket_mask)
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
      op.m->tombstones.fetch_add(1, std::memory_order_relaxed);
      op.m->evictions.fetch_add(1, std::memory_order_relaxed);
      return entry;
    }
  }
  return kNoEntry;
}

// Writes the new entry's values: the caller's slot gets the value, the other
// slots of a recycled entry are zeroed (a fresh one's are zero: the region
// starts zeroed, and slots at or above the high-water mark were never
// written, for any entry). Each slot's values lie in a page of their own:
// zeroing ten thousand of them took tens of milliseconds of page faults
// under the lock, so the holder says it goes on.
template <class G, class A>
void write_new_values(const Op<G, A> &op, uint32_t entry, uint32_t slot,
                      const void *value, bool fresh) {
  if (!is_per_slot(op.g.kind)) {
    store_shared(value_at(op.g, op.m, entry, 0), value, op.g.value_size);
    return;
  }
  const uint32_t used = fresh ? 0 : slots_in_use(op.g, op.m);
  for (uint32_t s = 0; s < used; ++s) {
    if (s % 64 == 0)
      note_insert_progress(op.m);
    if (s != slot)
      zero_shared(value_at(op.g, op.m, entry, s), op.g.value_stride);
  }
  store_shared(value_at(op.g, op.m, entry, slot), value, op.g.value_size);
}

template <class G, class A>
void store_existing(const Op<G, A> &op, uint32_t entry, uint32_t slot,
                    const void *value) {
  if (is_lru(op.g.kind))
    mark_referenced(op.g, op.m, entry);
  store_shared(value_at(op.g, op.m, entry, slot), value, op.g.value_size);
}

struct Placement {
  Found existing;
  uint32_t free_bucket = kNoEntry;
  bool free_is_tombstone = false;
};

// Lock held: no other inserter, so the first free bucket of the chain stays
// free until this holder publishes into it.
template <class G, class A>
Placement place(const Op<G, A> &op, const void *key, uint64_t hash) {
  const std::atomic<uint64_t> *buckets = buckets_of(op.g, op.m);
  const uint32_t mask = op.g.bucket_mask;
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
    if ((word >> 32) != (hash >> 32))
      continue;
    const uint32_t entry = live_entry(op.g, word);
    if (entry != kNoEntry &&
        equals_shared(key_at(op.g, op.m, entry), key, op.g.key_size)) {
      placement.existing = {entry, i, word};
      break;
    }
  }
  return placement;
}

// Every refused update counts in drops; those not refused for want of room
// also in the counter of their reason, so that the CLI names the cause.
long drop(MapHeader *map, long error,
          std::atomic<uint64_t> MapHeader::*reason = nullptr) {
  map->drops.fetch_add(1, std::memory_order_relaxed);
  if (reason)
    (map->*reason).fetch_add(1, std::memory_order_relaxed);
  return error;
}

// A waiter for the insert lock whose key another thread inserted meanwhile
// needs the lock no more: thousands of threads whose first hit makes the
// same few keys (the first update of a per-thread map) then leave instead
// of taking the lock one after another, which on a busy machine outlasted
// the timeout and dropped their updates.
template <class G, class A> struct InsertWait {
  const Op<G, A> *op;
  const void *key;
  uint64_t hash;
};

template <class G, class A> bool key_appeared(void *context) {
  const auto *wait = static_cast<const InsertWait<G, A> *>(context);
  return bool(hash_find(wait->op->g, wait->op->m, wait->key, wait->hash));
}

template <class G, class A>
long update_existing(const Op<G, A> &op, const Found &found, uint32_t slot,
                     const void *value, uint64_t flags) {
  if (flags == kBpfNoExist)
    return -EEXIST;
  store_existing(op, found.entry, slot, value);
  return 0;
}

template <class G, class A>
long insert(const Op<G, A> &op, const void *key, uint64_t hash,
            const void *value, uint32_t slot, uint64_t flags) {
  if (lock_abandoned(op.g))
    return drop(op.m, -EBUSY, &MapHeader::lock_drops);
  InsertWait<G, A> wait{&op, key, hash};
  const LockResult locked =
      lock_map(op.actor, op.m, kInsertLockTimeoutNs, key_appeared<G, A>, &wait);
  switch (locked) {
  case LockResult::Acquired:
    break;
  case LockResult::OwnerDied:
    recover(op);
    break;
  case LockResult::Abandoned:
    if (const Found found = hash_find(op.g, op.m, key, hash))
      return update_existing(op, found, slot, value, flags);
    // Deleted again meanwhile.
    return drop(op.m, -EBUSY, &MapHeader::lock_drops);
  case LockResult::TimedOut:
    op.m->lock_timeouts.fetch_add(1, std::memory_order_relaxed);
    lock_timed_out(op.g);
    return drop(op.m, -EBUSY, &MapHeader::lock_drops);
  case LockResult::Failed:
    return drop(op.m, -EBUSY, &MapHeader::lock_drops);
  }

  long result = 0;
  const Placement placement = place(op, key, hash);
  if (placement.existing) {
    if (flags == kBpfNoExist)
      result = -EEXIST;
    else
      store_existing(op, placement.existing.entry, slot, value);
  } else if (placement.free_bucket == kNoEntry) {
    result = drop(op.m, -E2BIG); // no free bucket: cannot happen at half load
  } else {
    uint32_t entry = kNoEntry;
    uint32_t state = kPendingPopped;
    bool fresh = false;
    if (op.m->count.load(std::memory_order_relaxed) < op.g.max_entries)
      entry = pop_free(op, fresh);
    if (entry == kNoEntry && is_lru(op.g.kind)) {
      entry = evict(op);
      state = kPendingCounted; // the victim was counted
    }
    if (entry == kNoEntry) {
      result = drop(op.m, -E2BIG);
    } else {
      op.m->pending_entry = entry;
      op.m->pending_state = state;
      note_insert_progress(op.m);
      store_shared(key_at(op.g, op.m, entry), key, op.g.key_size);
      write_new_values(op, entry, slot, value, fresh);
      note_insert_progress(op.m);
      if (!holds_map_lock(op.actor, op.m))
        return -EBUSY; // taken over: the new holder undid this insert
      EntryMeta &meta = meta_of(op.g, op.m)[entry];
      meta.bucket = placement.free_bucket;
      meta.referenced.store(1, std::memory_order_relaxed);
      if (state == kPendingPopped) {
        op.m->count.fetch_add(1, std::memory_order_relaxed);
        op.m->pending_state = kPendingCounted;
      }
      if (placement.free_is_tombstone)
        op.m->tombstones.fetch_sub(1, std::memory_order_relaxed);
      buckets_of(op.g, op.m)[placement.free_bucket].store(
          bucket_word(hash, entry), std::memory_order_release);
      op.m->pending_entry = kNoEntry;
      op.m->pending_state = 0;
    }
  }
  if (sweep_due(op))
    sweep_tombstones(op);
  unlock_map(op.actor, op.m);
  return result;
}

template <class G, class A>
long update(const Op<G, A> &op, const void *key, const void *value,
            uint64_t flags) {
  if (flags > kBpfExist)
    return -EINVAL;
  uint32_t slot = 0;
  if (is_per_slot(op.g.kind)) {
    slot = op.actor.slot();
    if (slot == kNoSlot)
      return drop(op.m, -E2BIG, &MapHeader::slot_drops);
  }
  const uint64_t hash = hash_key(key, op.g.key_size);
  if (const Found found = hash_find(op.g, op.m, key, hash))
    return update_existing(op, found, slot, value, flags);
  if (flags == kBpfExist)
    return -ENOENT;
  return insert(op, key, hash, value, slot, flags);
}

template <class G, class A>
bool delete_published(const Op<G, A> &op, uint32_t bucket, uint64_t word) {
  const uint32_t entry = live_entry(op.g, word);
  if (bucket > op.g.bucket_mask || entry == kNoEntry)
    return false;
  if (!buckets_of(op.g, op.m)[bucket].compare_exchange_strong(
          word, kBucketTombstone, std::memory_order_acq_rel))
    return false;
  op.m->tombstones.fetch_add(1, std::memory_order_relaxed);
  push_free(op, entry);
  op.m->count.fetch_sub(1, std::memory_order_relaxed);
  // Sweep only if nobody holds the lock: a delete never waits.
  if (sweep_due(op) && acquired(try_lock_map(op.actor, op.m))) {
    sweep_tombstones(op);
    unlock_map(op.actor, op.m);
  }
  return true;
}

template <class G, class A> long erase(const Op<G, A> &op, const void *key) {
  const uint64_t hash = hash_key(key, op.g.key_size);
  // Each retry means the entry was deleted or replaced meanwhile.
  for (int failures = 0; failures < kMaxCasFailures; ++failures) {
    const Found found = hash_find(op.g, op.m, key, hash);
    if (!found)
      return -ENOENT;
    if (delete_published(op, found.bucket, found.word))
      return 0;
  }
  note_anomaly(op.g, Anomaly::GaveUp);
  return -EBUSY;
}

template <class G, class A>
long for_each(const Op<G, A> &op, MapElemCallback callback, void *context) {
  uint32_t slot = 0;
  if (is_per_slot(op.g.kind)) {
    slot = op.actor.slot();
    if (slot == kNoSlot)
      return 0;
  }
  const std::atomic<uint64_t> *buckets = buckets_of(op.g, op.m);
  long visited = 0;
  for (uint32_t i = 0; i <= op.g.bucket_mask; ++i) {
    const uint64_t word = buckets[i].load(std::memory_order_acquire);
    if (!is_live(word))
      continue;
    const uint32_t entry = live_entry(op.g, word);
    if (entry == kNoEntry)
      continue;
    ++visited;
    if (callback(op.m, key_at(op.g, op.m, entry),
                 value_at(op.g, op.m, entry, slot), context) != 0)
      break;
  }
  return visited;
}

// The probe path's operations, and the CLI's (on its trusted copy).
template <class F> auto on_probe_path(MapHeader *map, F f) {
  const ProbeActor actor{map};
  return f(Op<MapHeader, ProbeActor>{*map, map, actor});
}
template <class F> auto on_cli_side(const TrustedMap &t, F f) {
  const CliActor actor{t.region};
  return f(Op<TrustedMap, CliActor>{t, reinterpret_cast<MapHeader *>(t.header),
                                    actor});
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
  return on_probe_path(
      map, [&](const auto &op) { return update(op, key, value, flags); });
}

bool hash_delete_published(MapHeader *map, uint32_t bucket, uint64_t word) {
  return on_probe_path(
      map, [&](const auto &op) { return delete_published(op, bucket, word); });
}

long hash_delete(MapHeader *map, const void *key) {
  return on_probe_path(map, [&](const auto &op) { return erase(op, key); });
}

long hash_for_each(MapHeader *map, MapElemCallback callback, void *context) {
  return on_probe_path(
      map, [&](const auto &op) { return for_each(op, callback, context); });
}

long hash_update(const TrustedMap &map, const void *key, const void *value,
                 uint64_t flags) {
  return on_cli_side(
      map, [&](const auto &op) { return update(op, key, value, flags); });
}

bool hash_delete_published(const TrustedMap &map, uint32_t bucket,
                           uint64_t word) {
  return on_cli_side(
      map, [&](const auto &op) { return delete_published(op, bucket, word); });
}

long hash_delete(const TrustedMap &map, const void *key) {
  return on_cli_side(map, [&](const auto &op) { return erase(op, key); });
}

long hash_for_each(const TrustedMap &map, MapElemCallback callback,
                   void *context) {
  return on_cli_side(
      map, [&](const auto &op) { return for_each(op, callback, context); });
}

} // namespace ubtrace::runtime::maps
