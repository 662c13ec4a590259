#include "runtime/maps/trusted.h"

#include "runtime/maps/shared_words.h"

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <mutex>

namespace ubtrace::runtime::maps {
namespace {

std::mutex g_lock;
std::vector<TrustedRegion *> g_regions;

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// A header's read-only part, copied word by word (the traced process may be
// writing it right now): compared, never used.
template <class Header> struct LineCopy {
  LineCopy(const char *at, size_t bytes) { load_shared(bytes_, at, bytes); }
  const Header &operator*() const {
    return *reinterpret_cast<const Header *>(bytes_);
  }
  alignas(Header) unsigned char bytes_[sizeof(Header)] = {};
};

bool same_map(const MapHeader &h, const TrustedMap &t, uint64_t region_id) {
  return h.magic == kMapMagic && h.kind == t.kind && h.index == t.index &&
         h.key_size == t.key_size && h.value_size == t.value_size &&
         h.max_entries == t.max_entries && h.key_stride == t.key_stride &&
         h.value_stride == t.value_stride && h.slot_count == t.slot_count &&
         h.bucket_mask == t.bucket_mask && h.region_id == region_id &&
         h.region_offset == t.region_offset && h.slot_stride == t.slot_stride &&
         h.buckets_offset == t.buckets_offset &&
         h.meta_offset == t.meta_offset && h.keys_offset == t.keys_offset &&
         h.values_offset == t.values_offset && h.total_size == t.total_size;
}

bool same_ring(const RingHeader &h, const TrustedMap &t, uint64_t region_id) {
  return h.magic == kRingMagic && h.kind == MapKind::RingBuf &&
         h.index == t.index && h.capacity == t.capacity &&
         h.data_offset == t.data_offset && h.region_id == region_id &&
         h.region_offset == t.region_offset;
}

bool same_line(const TrustedMap &t, uint64_t region_id) {
  if (t.kind == MapKind::RingBuf)
    return same_ring(
        *LineCopy<RingHeader>(t.header, offsetof(RingHeader, producer_pos)), t,
        region_id);
  return same_map(
      *LineCopy<MapHeader>(t.header, offsetof(MapHeader, insert_lock)), t,
      region_id);
}

} // namespace

const TrustedMap *TrustedRegion::ring() const {
  for (const auto &m : maps)
    if (m->kind == MapKind::RingBuf)
      return m.get();
  return implicit_ring.get();
}

bool TrustedRegion::plausible_count(uint64_t value) const {
  return value <= monotonic_ns() - created_ns + 1'000'000'000ull;
}

uint32_t TrustedRegion::slots_used(uint32_t slot_count) {
  const auto *header = reinterpret_cast<const RegionHeader *>(base);
  const uint32_t used = header->slot_high_water.load(std::memory_order_acquire);
  if (used > thread_slots)
    note(Anomaly::Slot);
  return std::min(used, std::min(slot_count, thread_slots));
}

void register_trusted(TrustedRegion *region) {
  std::lock_guard<std::mutex> hold(g_lock);
  region->created_ns = monotonic_ns();
  g_regions.push_back(region);
}

void unregister_trusted(TrustedRegion *region) {
  std::lock_guard<std::mutex> hold(g_lock);
  g_regions.erase(std::remove(g_regions.begin(), g_regions.end(), region),
                  g_regions.end());
}

TrustedMap *trusted_map(const void *handle) {
  std::lock_guard<std::mutex> hold(g_lock);
  for (TrustedRegion *r : g_regions) {
    if (handle < r->base || handle >= r->base + r->size)
      continue;
    for (const auto &m : r->maps)
      if (m->header == handle)
        return m.get();
    if (r->implicit_ring && r->implicit_ring->header == handle)
      return r->implicit_ring.get();
  }
  return nullptr;
}

TrustedMap *trusted_ring_holding(const void *address) {
  std::lock_guard<std::mutex> hold(g_lock);
  const char *at = static_cast<const char *>(address);
  auto holds = [at](TrustedMap *m) {
    return m && m->kind == MapKind::RingBuf &&
           at >= m->header + m->data_offset &&
           at < m->header + m->data_offset + m->capacity;
  };
  for (TrustedRegion *r : g_regions) {
    for (const auto &m : r->maps)
      if (holds(m.get()))
        return m.get();
    if (holds(r->implicit_ring.get()))
      return r->implicit_ring.get();
  }
  return nullptr;
}

std::vector<std::string> check_headers(TrustedRegion &region) {
  std::vector<std::string> changed;
  const LineCopy<RegionHeader> line(region.base,
                                    offsetof(RegionHeader, slot_high_water));
  const RegionHeader &h = *line;
  if (h.magic != kRegionMagic || h.version != kFormatVersion ||
      h.header_size != sizeof(RegionHeader) || h.total_size != region.size ||
      h.region_id != region.region_id || h.map_count != region.maps.size() ||
      h.thread_slots != region.thread_slots ||
      h.map_table_offset != region.map_table_offset ||
      h.slot_table_offset != region.slot_table_offset ||
      h.ring_offset != region.ring_offset)
    changed.push_back("the region header");
  for (const auto &m : region.maps) {
    uint64_t offset = 0;
    load_shared(&offset,
                region.base + region.map_table_offset + 8 * uint64_t{m->index},
                sizeof offset);
    if (offset != m->region_offset || !same_line(*m, region.region_id))
      changed.push_back((m->kind == MapKind::RingBuf ? "ring " : "map ") +
                        std::to_string(m->index));
  }
  if (region.implicit_ring &&
      !same_line(*region.implicit_ring, region.region_id))
    changed.push_back("the event ring");
  if (!changed.empty())
    region.note(Anomaly::Header);
  return changed;
}

std::string describe_anomalies(uint32_t kinds) {
  static const std::pair<Anomaly, const char *> kNames[] = {
      {Anomaly::Header, "headers"},
      {Anomaly::Entry, "entry indexes"},
      {Anomaly::Ring, "the event ring"},
      {Anomaly::Counter, "loss counters"},
      {Anomaly::Slot, "thread slots"},
      {Anomaly::LockHolder, "insert locks"},
      {Anomaly::GaveUp, "retry loops that never settled"},
  };
  std::string out;
  for (const auto &[bit, name] : kNames)
    if (kinds & static_cast<uint32_t>(bit))
      out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

} // namespace ubtrace::runtime::maps
