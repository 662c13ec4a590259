#include "runtime/agent/gpu/device_store.h"

#include "runtime/maps/format.h"
#include "runtime/maps/helpers.h"
#include "runtime/maps/region.h"

#include <cstring>

namespace ubtrace::agent::gpu {

using runtime::gpu::DeviceMapKind;
using runtime::gpu::DeviceMapLayout;

namespace {

bool has_storage(const DeviceMapLayout &l) {
  switch (l.kind) {
  case DeviceMapKind::Array:
  case DeviceMapKind::Hash:
  case DeviceMapKind::Ring:
    return true;
  case DeviceMapKind::None:
  case DeviceMapKind::ThreadLocal:
    return false;
  }
  return false;
}

uint64_t word(const std::vector<uint8_t> &bytes, size_t index) {
  uint64_t v = 0;
  if (8 * index + 8 <= bytes.size())
    std::memcpy(&v, bytes.data() + 8 * index, 8);
  return v;
}

} // namespace

Result<void> DeviceStore::check(CUresult rc, const char *what) const {
  if (rc == CUDA_SUCCESS)
    return {};
  const char *text = nullptr;
  if (cu_.cuGetErrorString)
    cu_.cuGetErrorString(rc, &text);
  return make_error(std::string(what) + ": CUDA error " + std::to_string(rc) +
                    (text ? std::string(" (") + text + ")" : ""));
}

Result<void> DeviceStore::initialise(const DeviceMapLayout &layout) {
  uint64_t at = addresses_[layout.index];
  std::vector<uint8_t> image = runtime::gpu::initial_image(layout);
  if (image.empty())
    return {};
  return check(cu_.cuMemcpyHtoD(at, image.data(), image.size()),
               "cuMemcpyHtoD (device map init)");
}

Result<void> DeviceStore::allocate(bool managed) {
  if (allocated_)
    return {};
  addresses_.assign(layouts_.size(), 0);
  drops_seen_.assign(layouts_.size(), 0);
  for (const DeviceMapLayout &l : layouts_) {
    if (!has_storage(l))
      continue;
    CUdeviceptr p = 0;
    CUresult rc = managed && cu_.cuMemAllocManaged
                      ? cu_.cuMemAllocManaged(&p, l.bytes, CU_MEM_ATTACH_GLOBAL)
                      : cu_.cuMemAlloc(&p, l.bytes);
    if (auto ok = check(rc, "allocating a device map"); !ok) {
      release();
      return ok;
    }
    addresses_[l.index] = p;
    if (auto ok = initialise(l); !ok) {
      release();
      return ok;
    }
  }
  allocated_ = true;
  return {};
}

void DeviceStore::release() {
  for (uint64_t &a : addresses_) {
    if (a && cu_.cuMemFree)
      cu_.cuMemFree(a);
    a = 0;
  }
  allocated_ = false;
}

Result<void> DeviceStore::read_back(runtime::maps::Region &region) {
  if (!allocated_)
    return {};
  std::vector<uint8_t> image;
  for (const DeviceMapLayout &l : layouts_) {
    if (l.kind != DeviceMapKind::Array && l.kind != DeviceMapKind::Hash)
      continue;
    if (l.index >= region.map_count())
      return make_error("the region lacks map " + std::to_string(l.index));
    image.resize(l.bytes);
    if (auto ok =
            check(cu_.cuMemcpyDtoH(image.data(), addresses_[l.index], l.bytes),
                  "cuMemcpyDtoH (device map)");
        !ok)
      return ok;
    void *map = region.map(l.index);
    // This thread's slot (per-slot maps) holds the device's totals: it is
    // overwritten, never added to, so reading back twice changes nothing.
    auto visited = runtime::gpu::for_each_device_entry(
        l, image,
        [&](std::span<const uint8_t> key, std::span<const uint8_t> value) {
          if (void *slot = ubt_bpf_map_lookup_elem(map, key.data())) {
            std::memcpy(slot, value.data(), value.size());
            return;
          }
          ubt_bpf_map_update_elem(map, key.data(), value.data(), 0);
        });
    if (!visited)
      return visited;
    uint64_t drops = runtime::gpu::device_drops(l, image);
    if (drops > drops_seen_[l.index]) {
      auto *header = static_cast<runtime::maps::MapHeader *>(map);
      header->drops.fetch_add(drops - drops_seen_[l.index]);
      drops_seen_[l.index] = drops;
    }
  }
  return {};
}

Result<DrainStats> DeviceStore::drain_ring(runtime::maps::Region &region) {
  DrainStats stats;
  if (!allocated_)
    return stats;
  for (const DeviceMapLayout &l : layouts_) {
    if (l.kind != DeviceMapKind::Ring || l.index >= region.map_count())
      continue;
    uint64_t base = addresses_[l.index];
    std::vector<uint8_t> header(UBT_GPU_MAP_HEADER_BYTES);
    if (auto ok = check(cu_.cuMemcpyDtoH(header.data(), base, header.size()),
                        "cuMemcpyDtoH (ring header)");
        !ok)
      return std::move(ok).take_error();
    uint64_t head = word(header, UBT_GPU_RING_HEAD_WORD);
    uint64_t tail = word(header, UBT_GPU_RING_TAIL_WORD);
    uint64_t lost = word(header, UBT_GPU_RING_DROPS_WORD);
    uint64_t capacity = l.capacity, mask = capacity - 1;
    auto *ring = static_cast<runtime::maps::RingHeader *>(region.map(l.index));
    if (lost > drops_seen_[l.index]) {
      stats.lost += lost - drops_seen_[l.index];
      ring->lost.fetch_add(lost - drops_seen_[l.index]);
      drops_seen_[l.index] = lost;
    }
    if (head == tail || head - tail > capacity)
      continue;
    // The bytes between tail and head, in ring order (at most two pieces).
    uint64_t used = head - tail, start = tail & mask;
    uint64_t first = std::min(used, capacity - start);
    std::vector<uint8_t> bytes(used);
    uint64_t data = base + UBT_GPU_MAP_HEADER_BYTES;
    if (auto ok = check(cu_.cuMemcpyDtoH(bytes.data(), data + start, first),
                        "cuMemcpyDtoH (ring)");
        !ok)
      return std::move(ok).take_error();
    if (first < used)
      if (auto ok =
              check(cu_.cuMemcpyDtoH(bytes.data() + first, data, used - first),
                    "cuMemcpyDtoH (ring)");
          !ok)
        return std::move(ok).take_error();
    // Whole records only: a record still being written (no READY bit yet)
    // stops the walk; the next drain takes it.
    uint64_t at = 0;
    while (at + 8 <= used) {
      uint64_t w = 0;
      std::memcpy(&w, bytes.data() + at, 8);
      if (!(w & UBT_GPU_RING_READY))
        break;
      uint64_t length = w & UBT_GPU_RING_LENGTH_MASK;
      uint64_t total = 8 + ((length + 7) & ~uint64_t(7));
      if (at + total > used)
        break;
      ubt_bpf_ringbuf_output(ring, bytes.data() + at + 8, length, 0);
      ++stats.records;
      at += total;
    }
    if (at == 0)
      continue;
    // Zero what was consumed (so the next lap's headers start unready),
    // then hand the space back.
    uint64_t zero_first = std::min(at, capacity - start);
    if (auto ok = check(cu_.cuMemsetD8(data + start, 0, zero_first),
                        "cuMemsetD8 (ring)");
        !ok)
      return std::move(ok).take_error();
    if (zero_first < at)
      if (auto ok = check(cu_.cuMemsetD8(data, 0, at - zero_first),
                          "cuMemsetD8 (ring)");
          !ok)
        return std::move(ok).take_error();
    uint64_t new_tail = tail + at;
    if (auto ok = check(
            cu_.cuMemcpyHtoD(base + 8 * UBT_GPU_RING_TAIL_WORD, &new_tail, 8),
            "cuMemcpyHtoD (ring tail)");
        !ok)
      return std::move(ok).take_error();
  }
  return stats;
}

Result<void> DeviceStore::clear(uint32_t index, bool zero) {
  if (!allocated_ || index >= layouts_.size())
    return {};
  const DeviceMapLayout &l = layouts_[index];
  uint64_t at = addresses_[index];
  switch (l.kind) {
  case DeviceMapKind::Array:
    return initialise(l);
  case DeviceMapKind::Hash:
    if (zero && l.init_kind == UBT_GPU_INIT_COPY)
      // zero(): keys stay, values go to zero.
      return check(
          cu_.cuMemsetD8(at + l.values_offset, 0, l.bytes - l.values_offset),
          "cuMemsetD8 (zero map)");
    drops_seen_[index] = 0;
    return check(cu_.cuMemsetD8(at, 0, l.keys_offset),
                 "cuMemsetD8 (clear map)");
  case DeviceMapKind::Ring:
  case DeviceMapKind::None:
  case DeviceMapKind::ThreadLocal:
    return {};
  }
  return {};
}

} // namespace ubtrace::agent::gpu
