// What the CLI does with maps besides running probes: print them (at exit,
// on print(), on interval), clear() and zero() them, and report the updates
// they dropped. These run while probes update the same maps from other
// threads and processes; they take no lock that a probe would wait on.
//
// `map` is a handle of a Region of this process. Sizes, strides and counts
// come from what this process made or checked (trusted.h), never from the
// region, which the traced process can write over: an entry index, a count
// or a slot mark that makes no sense is skipped or clamped and noted as an
// anomaly (Region::trusted()), and no loop runs longer than the map is big.
#pragma once

#include "runtime/bundle.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace ubtrace::runtime::maps {

struct MapInfo {
  MapKind kind = MapKind::Hash;
  uint32_t key_size = 0;
  uint32_t value_size = 0; // of one slot
  uint32_t max_entries = 0;
  uint32_t slots = 1; // slots holding values now (per-slot kinds), else 1
};
MapInfo map_info(const void *map);

struct MapCounters {
  uint32_t entries = 0;       // live keys; max_entries for arrays
  uint64_t drops = 0;         // updates refused: full, no thread slot, lock
  uint64_t evictions = 0;     // LRU kinds
  uint64_t lock_timeouts = 0; // part of drops
  uint64_t recoveries = 0;    // insert lock holders found dead
  uint64_t undone = 0;     // their inserts, cut short and undone: updates lost
  uint64_t lock_drops = 0; // part of drops: no insert lock (timeouts too)
  uint64_t slot_drops = 0; // part of drops: the thread had no slot
  // Some counter was written over (ran beyond belief): it reads 0 here.
  bool overwritten = false;
};
MapCounters map_counters(const void *map);

// Calls visit(key, values) for each entry; values holds the values of the
// slots in use when the scan began (read once: threads that claim a slot
// meanwhile are not in this scan), value_size bytes each, slot after slot. A
// hash entry deleted or replaced while it was being copied is left out; a key
// deleted and inserted again while the scan runs may be visited twice. Return
// false to stop.
using EntryVisitor = std::function<bool(std::span<const uint8_t> key,
                                        std::span<const uint8_t> values)>;
void for_each_entry(const void *map, const EntryVisitor &visit);

// All entries at once, for printing: entry i has key(i) and value(i, slot).
// Each key appears once (the scan is not atomic: a key deleted and inserted
// again while it ran is kept as last seen).
struct MapSnapshot {
  MapInfo info;
  size_t entries = 0;
  std::vector<uint8_t> keys;   // entries * key_size
  std::vector<uint8_t> values; // entries * slots * value_size

  std::span<const uint8_t> key(size_t i) const {
    return {keys.data() + i * info.key_size, info.key_size};
  }
  std::span<const uint8_t> value(size_t i, uint32_t slot) const {
    return {values.data() + (i * info.slots + slot) * info.value_size,
            info.value_size};
  }
};
MapSnapshot snapshot(const void *map);

// All slots of one key; false if absent.
bool read_entry(const void *map, const void *key, std::vector<uint8_t> &values);

// clear(): deletes every key (arrays: zeroes every value). zero(): zeroes the
// values of every key, keeping the keys. Updates racing with them may land
// before or after, as with bpftrace's clear() and zero().
void clear_map(void *map);
void zero_map(void *map);

} // namespace ubtrace::runtime::maps
