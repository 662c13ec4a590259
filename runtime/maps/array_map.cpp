#include "runtime/maps/array_map.h"

#include "runtime/maps/map_access.h"

#include <cerrno>

namespace ubtrace::runtime::maps {

long array_update(MapHeader *map, const void *key, const void *value,
                  uint64_t flags) {
  if (flags > kBpfExist)
    return -EINVAL;
  uint32_t index;
  std::memcpy(&index, key, sizeof index);
  if (index >= map->max_entries)
    return -E2BIG;
  if (flags == kBpfNoExist)
    return -EEXIST; // every index exists
  uint32_t slot = 0;
  if (map->kind == MapKind::PerCpuArray) {
    slot = thread_slot(map);
    if (slot == kNoSlot) {
      map->drops.fetch_add(1, std::memory_order_relaxed);
      return -E2BIG;
    }
  }
  store_shared(value_at(map, index, slot), value, map->value_size);
  return 0;
}

long array_for_each(MapHeader *map, MapElemCallback callback, void *context) {
  uint32_t slot = 0;
  if (map->kind == MapKind::PerCpuArray) {
    slot = thread_slot(map);
    if (slot == kNoSlot)
      return 0;
  }
  long visited = 0;
  for (uint32_t index = 0; index < map->max_entries; ++index) {
    uint32_t key = index; // the callback may write through it
    ++visited;
    if (callback(map, &key, value_at(map, index, slot), context) != 0)
      break;
  }
  return visited;
}

} // namespace ubtrace::runtime::maps
