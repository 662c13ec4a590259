// What a process may believe about a maps region it maps: the geometry it
// computed when it created the region (the CLI) or checked once when it
// attached (the agent, region.cpp's validation), kept in its own memory and
// never read back from the region.
//
// Why: the region is shared with the traced process, which can write over
// its mapping (a buggy program overrunning a buffer, or a hostile one) at
// any moment. The CLI, which may run as root, must then neither crash nor
// hang nor be steered into its own memory: every size, stride, offset and
// count it uses comes from here; what it reads from the region (bucket
// words, entry indexes, ring positions and record headers, counters, slot
// high-water marks) is data, bounds-checked against this before use, and
// loops over it are bounded by these numbers. What does not add up is
// counted as an anomaly (the session reports it: the data may be wrong),
// never trusted.
//
// The hot path in the traced process reads the same geometry from the
// map's header (the first cache line of MapHeader / RingHeader): the
// algorithms (map_access.h, hash_map.cpp, ring_buffer.cpp) take their
// geometry as a template parameter G with these field names, either the
// header itself or a TrustedMap.
#pragma once

#include "runtime/bundle.h"
#include "runtime/maps/format.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ubtrace::runtime::maps {

struct TrustedRegion;

// One map or ring: the fields of MapHeader's (RingHeader's) read-only line,
// as they were made.
struct TrustedMap {
  MapKind kind = MapKind::Hash;
  uint32_t index = 0; // in the map table; kImplicitRing for the own ring
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
  uint32_t key_stride = 0;
  uint32_t value_stride = 0;
  uint32_t slot_count = 0;
  uint32_t bucket_mask = 0;
  uint64_t slot_stride = 0;
  uint64_t buckets_offset = 0;
  uint64_t meta_offset = 0;
  uint64_t keys_offset = 0;
  uint64_t values_offset = 0;
  uint64_t total_size = 0;
  uint64_t region_offset = 0; // of the header
  uint64_t capacity = 0;      // rings: bytes of data
  uint64_t data_offset = 0;   // rings: relative to the header

  char *header = nullptr; // this process's address of the header
  TrustedRegion *region = nullptr;
  // The CLI gave up waiting for this map's insert lock once (a holder that
  // never lets go): its later inserts are dropped at once, not after
  // another timeout each.
  std::atomic<bool> lock_given_up{false};

  TrustedMap() = default;
  TrustedMap(const TrustedMap &) = delete;
  TrustedMap &operator=(const TrustedMap &) = delete;
};

// Anomalies: what the region held that its creator never wrote.
enum class Anomaly : uint32_t {
  Header = 1u << 0,     // a header's read-only line changed
  Entry = 1u << 1,      // an entry index out of range (bucket, free list)
  Ring = 1u << 2,       // a ring position or record header made no sense
  Counter = 1u << 3,    // a counter ran backwards or beyond belief
  Slot = 1u << 4,       // the slot table or high-water mark is off
  LockHolder = 1u << 5, // an insert lock held by nobody plausible
  GaveUp = 1u << 6,     // a bounded retry loop ran out
};

struct TrustedRegion {
  char *base = nullptr;
  uint64_t size = 0;
  uint64_t region_id = 0;
  uint32_t thread_slots = 0;
  uint64_t slot_table_offset = 0;
  uint64_t map_table_offset = 0;
  uint64_t ring_offset = 0;
  uint64_t created_ns = 0; // CLOCK_MONOTONIC at creation or attach
  std::vector<std::unique_ptr<TrustedMap>> maps; // map table order
  std::unique_ptr<TrustedMap> implicit_ring;     // when no map is a ring

  // The CLI's own thread slot (cli_identity.h), claimed at first need.
  std::atomic<uint32_t> cli_slot{kNoSlot};
  std::atomic<uint32_t> cli_generation{0};
  std::atomic<bool> cli_slot_tried{false};

  // Anomaly bits seen so far (Anomaly), and how many times.
  std::atomic<uint32_t> anomaly_kinds{0};
  std::atomic<uint64_t> anomalies{0};

  void note(Anomaly kind) {
    anomaly_kinds.fetch_or(static_cast<uint32_t>(kind),
                           std::memory_order_relaxed);
    anomalies.fetch_add(1, std::memory_order_relaxed);
  }
  const TrustedMap *ring() const; // the first RingBuf map, or the own ring
  TrustedMap *map(uint32_t index) const {
    return index < maps.size() ? maps[index].get() : nullptr;
  }
  // A counter the region keeps: at most one increment per nanosecond since
  // the region was made (one atomic add on one cache line takes longer).
  // Larger is written over, not counted.
  bool plausible_count(uint64_t value) const;
  // The slot high-water mark, clamped to the pool (noted when it is not).
  uint32_t slots_used(uint32_t slot_count);
};

// The process's trusted regions, by address. A region is registered by
// Region for as long as it is mapped; lookups are for the CLI's side and
// setup code, never the probe path (they take a lock).
void register_trusted(TrustedRegion *region);
void unregister_trusted(TrustedRegion *region);
// The map or ring whose header is at `handle`, or null.
TrustedMap *trusted_map(const void *handle);
// The ring whose data holds `address` (a reserved record), or null.
TrustedMap *trusted_ring_holding(const void *address);

// Compares every header's read-only line (and the region header) with what
// was made; notes Anomaly::Header for each difference. Returns the names of
// what differs ("the region header", "map 3", "the event ring").
std::vector<std::string> check_headers(TrustedRegion &region);

// What the anomaly bits mean, for a message: "map headers, hash buckets".
std::string describe_anomalies(uint32_t kinds);

} // namespace ubtrace::runtime::maps
