// The layout of a maps region: what lies where inside the shared memory that
// the CLI creates and the traced process maps. Two processes map the region at
// different addresses, so nothing in here is a pointer: every reference is an
// offset, and code turns it into an address with the base of its own mapping.
//
//   RegionHeader            at offset 0
//   map table               uint64_t[map_count]: offset of each MapHeader
//   ThreadSlot[thread_slots]
//   per map: MapHeader, then its arrays (offsets relative to the MapHeader);
//            for a RingBuf map, RingHeader then the ring's data, page aligned
//   [a RingHeader and data of the region's own ring, if no map is a ring]
//
// A map's "handle" (what helpers and JIT'd code receive) is the address of its
// MapHeader in the calling process; a ring's handle is its RingHeader.
#pragma once

#include "runtime/bundle.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <pthread.h>

namespace ubtrace::runtime::maps {

inline constexpr size_t kCacheLine = 64;
inline constexpr uint64_t kRegionMagic = 0x31706d6374627531ull; // "1ubtcmp1"
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kMapMagic = 0x4d746255;  // "UbtM"
inline constexpr uint32_t kRingMagic = 0x52746255; // "UbtR"

// Records in the ring name their writer by thread slot in 14 bits.
inline constexpr uint32_t kMaxThreadSlots = 0x3ffe;
inline constexpr uint32_t kNoSlot = 0xffffffffu;

// One per thread that touches per-slot maps or writes events. The owner holds
// `owner` (a robust, process-shared mutex) for as long as it lives, so that
// the kernel marks it OWNER_DIED if the thread dies, in whatever process and
// pid namespace: that is how a slot is recycled, and how the ring's consumer
// (and a waiter for a map's insert lock) tells a dead writer (holder) from a
// slow one.
struct alignas(kCacheLine) ThreadSlot {
  pthread_mutex_t owner;
  std::atomic<uint32_t> generation; // bumped on every claim
  std::atomic<uint32_t> claimed;    // a hint; the mutex is the truth
};
static_assert(sizeof(ThreadSlot) == kCacheLine);

struct RegionHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t header_size;
  uint64_t total_size;
  uint64_t region_id; // random, never 0: keys per-thread slot caches
  uint32_t map_count;
  uint32_t thread_slots;
  uint64_t map_table_offset;
  uint64_t slot_table_offset;
  uint64_t ring_offset; // first RingBuf map, or the region's own ring
  // Mutable counters on their own cache line.
  alignas(kCacheLine) std::atomic<uint32_t> slot_high_water;
  std::atomic<uint64_t> slot_exhausted; // claims refused: every slot live
  // Claims refused to a child of a raw fork or clone system call, which has
  // no robust mutex list (thread_slot.cpp, adopt_process).
  std::atomic<uint64_t> slot_raw_children;
};

// Hash bucket words: 0 is empty, kTombstone a deleted entry, anything else
// (tag << 32 | entry + 1) a live entry whose key hashes to `tag` in its high
// 32 bits.
inline constexpr uint64_t kBucketEmpty = 0;
inline constexpr uint64_t kBucketTombstone = 0xffffffffull;
inline constexpr uint32_t kNoEntry = 0xffffffffu;

// Per entry bookkeeping of hash maps.
struct EntryMeta {
  std::atomic<uint32_t> next_free; // free stack link
  uint32_t bucket;                 // where the entry is published
  std::atomic<uint8_t> referenced; // LRU: used since the clock hand passed
  uint8_t pad[7];
};
static_assert(sizeof(EntryMeta) == 16);

struct MapHeader {
  // Read-only after creation: the hot path reads only this cache line.
  uint32_t magic;
  MapKind kind;
  uint8_t reserved0[3];
  uint32_t key_size;   // bytes; 4 for arrays
  uint32_t value_size; // bytes of one slot
  uint32_t max_entries;
  uint32_t key_stride;   // key_size rounded up to 8
  uint32_t value_stride; // value_size rounded up to 8
  uint32_t slot_count;   // thread slots for per-slot kinds, else 1
  uint32_t bucket_mask;  // hash kinds: bucket count - 1
  uint32_t index;        // position in the region's map table
  uint64_t region_id;
  uint64_t region_offset;  // of this header: region base = this - offset
  uint64_t slot_stride;    // bytes between two slots' value arrays
  uint64_t buckets_offset; // the following are relative to this header
  uint64_t meta_offset;
  uint64_t keys_offset;
  uint64_t values_offset;
  uint64_t total_size; // of the header and its arrays

  // Insert/evict/sweep serialise on this lock (map_lock.h); lookups,
  // updates of existing entries and deletes take no lock.
  alignas(kCacheLine) std::atomic<uint32_t> insert_lock;
  std::atomic<uint32_t> free_head; // Treiber stack of freed entries
  uint32_t bump;                   // entries [bump, max) were never used
  uint32_t lru_hand;
  uint32_t pending_entry;            // being inserted by the lock holder...
  uint32_t pending_state;            // ...and how far it got (hash_map.cpp)
  std::atomic<uint32_t> sweep_floor; // tombstones the last sweep left
  // Bumped by the lock holder as its insert goes on: a waiter tells a slow
  // holder from one that left its insert by it (map_lock.cpp).
  std::atomic<uint32_t> insert_progress;
  // Counters, apart from the lock's line.
  alignas(kCacheLine) std::atomic<uint32_t> count;
  std::atomic<uint32_t> tombstones;
  std::atomic<uint64_t> drops;         // updates refused, for any reason
  std::atomic<uint64_t> evictions;     // LRU
  std::atomic<uint64_t> lock_timeouts; // inserts given up waiting
  std::atomic<uint64_t> recoveries;    // lock holders found dead
  std::atomic<uint64_t> undone;        // their inserts, cut short: updates lost
  // The parts of drops that are not a full map: inserts that did not get the
  // lock (timed out, given up on, or held under the caller's own name by
  // another process), and updates of threads that had no thread slot.
  std::atomic<uint64_t> lock_drops;
  std::atomic<uint64_t> slot_drops;
};

// Ring record header: 16 bytes before each record's data. The first word is
// the record's state; before a record is claimed, every word of the ring holds
// kFree | (position >> 3) for the position it will have, which lets a producer
// claim a header with one compare-and-swap that cannot succeed at a stale
// position (see ring_buffer.cpp).
inline constexpr uint64_t kRecFree = 1ull << 63;
inline constexpr uint64_t kRecBusy = 1ull << 32;
inline constexpr uint64_t kRecDiscard = 1ull << 33;
inline constexpr uint64_t kRecPad = 1ull << 34;
inline constexpr unsigned kRecSlotShift = 35; // 14 bits
inline constexpr unsigned kRecGenShift = 49;  // 14 bits
inline constexpr uint64_t kRecLenMask = 0xffffffffull;
inline constexpr uint32_t kRecNoSlot = 0x3fff;
inline constexpr uint64_t kRecOwnerMask = ((1ull << 28) - 1) << kRecSlotShift;
inline constexpr uint64_t kRecordHeaderSize = 16;

// A ring is a map too (MapKind::RingBuf: the bundle's events map): its
// handle is its RingHeader, which starts like a MapHeader (magic, kind) so
// that code given any handle can tell which it holds.
struct RingHeader {
  uint32_t magic;
  MapKind kind; // MapKind::RingBuf
  uint8_t reserved0[3];
  uint32_t index; // in the map table; kImplicitRing for the default ring
  uint32_t reserved1;
  uint64_t capacity;    // bytes of data, a power of two
  uint64_t data_offset; // relative to this header
  uint64_t region_id;
  uint64_t region_offset; // of this header
  alignas(kCacheLine) std::atomic<uint64_t> producer_pos;
  alignas(kCacheLine) std::atomic<uint64_t> consumer_pos;
  alignas(kCacheLine) std::atomic<uint32_t> consumer_waiting;
  std::atomic<uint32_t> wake_seq;                 // futex word
  alignas(kCacheLine) std::atomic<uint64_t> lost; // no room: dropped
  std::atomic<uint64_t> dead_writer_skips;        // writer died before commit
  std::atomic<uint64_t> abandoned; // live writer too slow: skipped
};

static_assert(offsetof(RingHeader, magic) == offsetof(MapHeader, magic) &&
              offsetof(RingHeader, kind) == offsetof(MapHeader, kind));

inline constexpr uint32_t kImplicitRing = 0xffffffffu;

// The kind of any handle, map or ring.
inline MapKind kind_of(const void *handle) {
  return static_cast<const MapHeader *>(handle)->kind;
}

// Address helpers: every process turns offsets into its own addresses.
inline RegionHeader *region_of(const MapHeader *map) {
  return reinterpret_cast<RegionHeader *>(reinterpret_cast<uintptr_t>(map) -
                                          map->region_offset);
}
inline RegionHeader *region_of(const RingHeader *ring) {
  return reinterpret_cast<RegionHeader *>(reinterpret_cast<uintptr_t>(ring) -
                                          ring->region_offset);
}
inline ThreadSlot *thread_slots(RegionHeader *region) {
  return reinterpret_cast<ThreadSlot *>(reinterpret_cast<char *>(region) +
                                        region->slot_table_offset);
}
template <class T> inline T *at_offset(const void *base, uint64_t offset) {
  return reinterpret_cast<T *>(
      const_cast<char *>(static_cast<const char *>(base)) + offset);
}

inline bool is_per_slot(MapKind kind) {
  switch (kind) {
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
  case MapKind::PerCpuArray:
    return true;
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::Array:
  case MapKind::RingBuf:
    return false;
  }
  return false;
}

inline bool is_hash(MapKind kind) {
  switch (kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return true;
  case MapKind::Array:
  case MapKind::PerCpuArray:
  case MapKind::RingBuf:
    return false;
  }
  return false;
}

inline bool is_lru(MapKind kind) {
  return kind == MapKind::LruHash || kind == MapKind::PerCpuLruHash;
}

} // namespace ubtrace::runtime::maps
