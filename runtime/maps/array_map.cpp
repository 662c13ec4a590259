#include "runtime/maps/array_map.h"

#include "runtime/maps/actor.h"
#include "runtime/maps/map_access.h"

#include <cerrno>

namespace ubtrace::runtime::maps {
namespace {

// G and Actor as in hash_map.cpp: the probe path's header or the CLI's
// trusted copy, and who runs the operation.
template <class G, class Actor>
long update(const G &g, MapHeader *m, const Actor &actor, const void *key,
            const void *value, uint64_t flags) {
  if (flags > kBpfExist)
    return -EINVAL;
  uint32_t index;
  std::memcpy(&index, key, sizeof index);
  if (index >= g.max_entries)
    return -E2BIG;
  if (flags == kBpfNoExist)
    return -EEXIST; // every index exists
  uint32_t slot = 0;
  if (g.kind == MapKind::PerCpuArray) {
    slot = actor.slot();
    if (slot == kNoSlot) {
      m->drops.fetch_add(1, std::memory_order_relaxed);
      m->slot_drops.fetch_add(1, std::memory_order_relaxed);
      return -E2BIG;
    }
  }
  store_shared(value_at(g, m, index, slot), value, g.value_size);
  return 0;
}

template <class G, class Actor>
long for_each(const G &g, MapHeader *m, const Actor &actor,
              MapElemCallback callback, void *context) {
  uint32_t slot = 0;
  if (g.kind == MapKind::PerCpuArray) {
    slot = actor.slot();
    if (slot == kNoSlot)
      return 0;
  }
  long visited = 0;
  for (uint32_t index = 0; index < g.max_entries; ++index) {
    uint32_t key = index; // the callback may write through it
    ++visited;
    if (callback(m, &key, value_at(g, m, index, slot), context) != 0)
      break;
  }
  return visited;
}

MapHeader *header_of(const TrustedMap &t) {
  return reinterpret_cast<MapHeader *>(t.header);
}

} // namespace

long array_update(MapHeader *map, const void *key, const void *value,
                  uint64_t flags) {
  return update(*map, map, ProbeActor{map}, key, value, flags);
}

long array_for_each(MapHeader *map, MapElemCallback callback, void *context) {
  return for_each(*map, map, ProbeActor{map}, callback, context);
}

long array_update(const TrustedMap &map, const void *key, const void *value,
                  uint64_t flags) {
  return update(map, header_of(map), CliActor{map.region}, key, value, flags);
}

long array_for_each(const TrustedMap &map, MapElemCallback callback,
                    void *context) {
  return for_each(map, header_of(map), CliActor{map.region}, callback, context);
}

} // namespace ubtrace::runtime::maps
