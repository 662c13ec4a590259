#include "runtime/maps/helpers.h"

#include "runtime/maps/array_map.h"
#include "runtime/maps/hash_map.h"
#include "runtime/maps/map_access.h"
#include "runtime/maps/ring_buffer.h"

#include <cerrno>

using namespace ubtrace::runtime;
using namespace ubtrace::runtime::maps;

namespace {
MapHeader *header(void *map) {
  return static_cast<MapHeader *>(map);
}
} // namespace

extern "C" {

void *ubt_bpf_map_lookup_elem(void *map, const void *key) {
  const MapHeader *m = header(map);
  switch (m->kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return hash_lookup(m, key);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return array_lookup(m, key);
  case MapKind::RingBuf:
    return nullptr; // rings hold no elements
  }
  return nullptr;
}

void *ubt_bpf_map_lookup_percpu_elem(void *map, const void *key, uint32_t cpu) {
  const MapHeader *m = header(map);
  switch (m->kind) {
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
  case MapKind::PerCpuArray:
    break;
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::Array:
  case MapKind::RingBuf:
    return nullptr;
  }
  // Slots never claimed hold nothing, and reading them would allocate their
  // pages: report them absent, like a CPU that does not exist.
  if (cpu >= m->slot_count ||
      cpu >= region_of(m)->slot_high_water.load(std::memory_order_acquire))
    return nullptr;
  uint32_t entry;
  if (m->kind == MapKind::PerCpuArray) {
    std::memcpy(&entry, key, sizeof entry);
    if (entry >= m->max_entries)
      return nullptr;
  } else {
    const Found found = hash_find(m, key, hash_key(key, m->key_size));
    if (!found)
      return nullptr;
    entry = found.entry;
  }
  return value_at(m, entry, cpu);
}

long ubt_bpf_map_update_elem(void *map, const void *key, const void *value,
                             uint64_t flags) {
  MapHeader *m = header(map);
  switch (m->kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return hash_update(m, key, value, flags);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return array_update(m, key, value, flags);
  case MapKind::RingBuf:
    return -EINVAL;
  }
  return -EINVAL;
}

long ubt_bpf_map_delete_elem(void *map, const void *key) {
  MapHeader *m = header(map);
  switch (m->kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return hash_delete(m, key);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return -EINVAL; // array elements cannot be deleted
  case MapKind::RingBuf:
    return -EINVAL;
  }
  return -EINVAL;
}

long ubt_map_iterate(void *map, ubt_map_elem_callback callback, void *context) {
  MapHeader *m = header(map);
  switch (m->kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return hash_for_each(m, callback, context);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return array_for_each(m, callback, context);
  case MapKind::RingBuf:
    return -EINVAL;
  }
  return -EINVAL;
}

long ubt_bpf_for_each_map_elem(void *map, void *callback, void *context,
                               uint64_t flags) {
  if (flags != 0)
    return -EINVAL;
  return ubt_map_iterate(map, reinterpret_cast<ubt_map_elem_callback>(callback),
                         context);
}

long ubt_bpf_ringbuf_output(void *ringbuf, const void *data, uint64_t size,
                            uint64_t flags) {
  return ring_output(static_cast<RingHeader *>(ringbuf), data, size, flags);
}

void *ubt_bpf_ringbuf_reserve(void *ringbuf, uint64_t size, uint64_t flags) {
  if (flags != 0)
    return nullptr;
  return ring_reserve(static_cast<RingHeader *>(ringbuf), size);
}

void ubt_bpf_ringbuf_submit(void *data, uint64_t flags) {
  ring_commit(data, flags, /*discard=*/false);
}

void ubt_bpf_ringbuf_discard(void *data, uint64_t flags) {
  ring_commit(data, flags, /*discard=*/true);
}

uint64_t ubt_bpf_ringbuf_query(void *ringbuf, uint64_t flags) {
  return ring_query(static_cast<RingHeader *>(ringbuf), flags);
}

} // extern "C"
