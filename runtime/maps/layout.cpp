#include "runtime/maps/layout.h"

#include "runtime/maps/format.h"

#include <algorithm>
#include <string>

namespace ubtrace::runtime::maps {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint32_t kMinBuckets = 16;

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

// a * b, or false when it overflows or exceeds the region limit.
bool bounded_product(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_mul_overflow(a, b, &out) && out <= kMaxRegionBytes;
}

uint32_t next_power_of_two(uint64_t value) {
  uint64_t p = 1;
  while (p < value)
    p <<= 1;
  return static_cast<uint32_t>(p);
}

Error too_big(const char *what) {
  return make_error(std::string("map region: ") + what +
                    " exceeds the region size limit");
}

} // namespace

namespace {

Result<MapPlacement> place_ring(uint64_t capacity) {
  if (capacity < kPage || (capacity & (capacity - 1)) != 0 ||
      capacity > (1ull << 31))
    return make_error("map region: ring size " + std::to_string(capacity) +
                      " must be a power of two from 4096 to 2^31");
  MapPlacement p;
  static_assert(sizeof(RingHeader) <= kPage);
  p.values_offset = kPage;
  p.total_size = kPage + capacity;
  return p;
}

} // namespace

Result<MapPlacement> place_map(const MapLayout &map, uint32_t thread_slots) {
  if (map.kind == MapKind::RingBuf)
    return place_ring(map.max_entries);
  const bool hash = is_hash(map.kind);
  const uint32_t key_size = hash ? map.key_size : 4;
  if (hash && key_size == 0)
    return make_error("map region: a hash map needs a key size");
  if (key_size > kMaxKeySize)
    return make_error("map region: key size " + std::to_string(key_size) +
                      " is above " + std::to_string(kMaxKeySize));
  if (map.value_size == 0)
    return make_error("map region: value size is 0");
  if (map.value_size > kMaxValueSize)
    return make_error("map region: value size " +
                      std::to_string(map.value_size) + " is above " +
                      std::to_string(kMaxValueSize));
  if (map.max_entries == 0)
    return make_error("map region: max_entries is 0");
  if (map.max_entries > kMaxEntries)
    return make_error("map region: max_entries " +
                      std::to_string(map.max_entries) + " is above " +
                      std::to_string(kMaxEntries));
  if (thread_slots == 0 || thread_slots > kMaxThreadSlots)
    return make_error("map region: thread slots must be 1.." +
                      std::to_string(kMaxThreadSlots));

  MapPlacement p;
  p.key_stride = static_cast<uint32_t>(align_up(key_size, 8));
  p.value_stride = static_cast<uint32_t>(align_up(map.value_size, 8));
  p.slot_count = is_per_slot(map.kind) ? thread_slots : 1;
  uint64_t offset = align_up(sizeof(MapHeader), kCacheLine);
  uint64_t bytes = 0;
  if (hash) {
    // At most half full, so linear probing chains stay short.
    p.bucket_count = next_power_of_two(
        std::max<uint64_t>(2ull * map.max_entries, kMinBuckets));
    p.buckets_offset = offset;
    offset = align_up(offset + uint64_t{p.bucket_count} * 8, kCacheLine);
    p.meta_offset = offset;
    offset = align_up(offset + uint64_t{map.max_entries} * sizeof(EntryMeta),
                      kCacheLine);
    p.keys_offset = offset;
    if (!bounded_product(map.max_entries, p.key_stride, bytes))
      return too_big("keys");
    offset = align_up(offset + bytes, kCacheLine);
  }
  // Slot-major values: each slot's values are contiguous and start on a cache
  // line of their own, so threads never share a line, and a slot no thread
  // claimed is never touched (its pages stay unallocated).
  if (!bounded_product(map.max_entries, p.value_stride, bytes))
    return too_big("values");
  p.slot_stride = align_up(bytes, kCacheLine);
  p.values_offset = offset;
  if (!bounded_product(p.slot_stride, p.slot_count, bytes))
    return too_big("per-slot values");
  offset += bytes;
  if (offset > kMaxRegionBytes)
    return too_big("map");
  p.total_size = align_up(offset, kCacheLine);
  return p;
}

namespace {

// The automatic slot count (RegionOptions): per-slot bytes of all maps
// against the address budget.
Result<uint32_t> auto_thread_slots(std::span<const MapLayout> maps) {
  uint64_t per_slot = 0;
  for (const MapLayout &map : maps) {
    if (!is_per_slot(map.kind))
      continue;
    auto placed = place_map(map, 1);
    if (!placed)
      return std::move(placed).take_error();
    per_slot += placed->slot_stride;
  }
  if (per_slot == 0)
    return kMaxThreadSlots; // only ring records name slots
  uint64_t fit = kSlotAddressBudget / per_slot;
  return static_cast<uint32_t>(
      std::clamp<uint64_t>(fit, kMinAutoThreadSlots, kMaxThreadSlots));
}

} // namespace

Result<RegionPlan> plan_region(std::span<const MapLayout> maps,
                               const RegionOptions &requested) {
  RegionOptions options = requested;
  if (options.thread_slots == kAutoThreadSlots) {
    auto slots = auto_thread_slots(maps);
    if (!slots)
      return std::move(slots).take_error();
    options.thread_slots = *slots;
  }
  if (options.thread_slots == 0 || options.thread_slots > kMaxThreadSlots)
    return make_error("map region: thread slots must be 1.." +
                      std::to_string(kMaxThreadSlots));

  RegionPlan plan;
  plan.thread_slots = options.thread_slots;
  uint64_t offset = align_up(sizeof(RegionHeader), kCacheLine);
  plan.map_table_offset = offset;
  offset = align_up(offset + maps.size() * sizeof(uint64_t), kCacheLine);
  plan.slot_table_offset = offset;
  offset += uint64_t{options.thread_slots} * sizeof(ThreadSlot);
  bool have_ring = false;
  for (const MapLayout &map : maps) {
    auto placed = place_map(map, options.thread_slots);
    if (!placed)
      return std::move(placed).take_error();
    // Rings start on a page of their own; their data too.
    const bool ring = map.kind == MapKind::RingBuf;
    offset = align_up(offset, ring ? kPage : kCacheLine);
    if (ring && !have_ring) {
      plan.ring_offset = offset;
      have_ring = true;
    }
    plan.map_offsets.push_back(offset);
    plan.maps.push_back(*placed);
    offset += placed->total_size;
    if (offset > kMaxRegionBytes)
      return too_big("the maps");
  }
  if (!have_ring) {
    auto placed = place_ring(options.ring_bytes);
    if (!placed)
      return std::move(placed).take_error();
    plan.ring_offset = align_up(offset, kPage);
    plan.implicit_ring = options.ring_bytes;
    offset = plan.ring_offset + placed->total_size;
  }
  plan.total_size = align_up(offset, kPage);
  if (plan.total_size > kMaxRegionBytes)
    return too_big("the region");
  return plan;
}

} // namespace ubtrace::runtime::maps
