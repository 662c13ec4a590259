// Where each map and the ring go inside a region, computed from the map
// layouts alone so that the side that maps a region can recompute and check
// what the creator wrote before it trusts a single offset.
#pragma once

#include "runtime/bundle.h"
#include "runtime/result.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ubtrace::runtime::maps {

// What the region needs to know of one map. A RingBuf "map" is an event
// ring of max_entries bytes (a power of two from 4096 to 2^31), as in the
// kernel; its key and value sizes are ignored.
struct MapLayout {
  MapKind kind = MapKind::Hash;
  uint32_t key_size = 0;   // ignored for arrays: their keys are u32 indexes
  uint32_t value_size = 0; // bytes of one value (of one slot, per-slot kinds)
  uint32_t max_entries = 0;
};

// RegionOptions::thread_slots: as many as the per-slot maps fit in
// kSlotAddressBudget of address space, at least kMinAutoThreadSlots and at
// most kMaxThreadSlots (a program of 10000 threads gets a slot each unless
// its per-slot maps are huge).
inline constexpr uint32_t kAutoThreadSlots = 0xffffffffu;
inline constexpr uint32_t kMinAutoThreadSlots = 512;
inline constexpr uint64_t kSlotAddressBudget = 16ull << 30;

struct RegionOptions {
  // Slots of per-slot maps, i.e. how many threads (of all processes sharing
  // the region) can hold one at once. Memory is reserved for all of them, but
  // pages of slots no thread ever claimed are never touched.
  uint32_t thread_slots = kAutoThreadSlots;
  // Bytes of the region's own event ring, made only when the layouts have
  // no RingBuf map: a power of two from 4096 to 2^31.
  uint64_t ring_bytes = 1u << 20;
};

// One map's arrays, offsets relative to its MapHeader. For a ring, only
// values_offset (its data, after the RingHeader) and total_size are set.
struct MapPlacement {
  uint32_t key_stride = 0;
  uint32_t value_stride = 0;
  uint32_t slot_count = 0;
  uint32_t bucket_count = 0; // 0 for arrays
  uint64_t slot_stride = 0;
  uint64_t buckets_offset = 0;
  uint64_t meta_offset = 0;
  uint64_t keys_offset = 0;
  uint64_t values_offset = 0;
  uint64_t total_size = 0;
};

struct RegionPlan {
  uint32_t thread_slots = 0; // the options', or the automatic choice
  uint64_t map_table_offset = 0;
  uint64_t slot_table_offset = 0;
  std::vector<uint64_t> map_offsets;
  std::vector<MapPlacement> maps;
  uint64_t ring_offset = 0;   // the first RingBuf map, or the implicit ring
  uint64_t implicit_ring = 0; // bytes of the implicit ring; 0 if none
  uint64_t total_size = 0;
};

// Checks one map's layout and places its arrays. Fails on sizes the region
// cannot hold (0, overflow, beyond the region size limit).
Result<MapPlacement> place_map(const MapLayout &map, uint32_t thread_slots);

Result<RegionPlan> plan_region(std::span<const MapLayout> maps,
                               const RegionOptions &options);

// Regions above this size are refused: a layout asking for more is a bug or
// a map specification gone wrong, not something to reserve address space for.
inline constexpr uint64_t kMaxRegionBytes = 1ull << 40;

// What one map may have (place_map refuses more); the compiler refuses
// scripts past them at the map's first use.
inline constexpr uint32_t kMaxKeySize = 1u << 16;
inline constexpr uint32_t kMaxValueSize = 1u << 24;
inline constexpr uint32_t kMaxEntries = 1u << 30;

} // namespace ubtrace::runtime::maps
