// Arrays (Array, PerCpuArray): max_entries values indexed by a u32 key. Scalar
// maps are 1-entry arrays. Every index always exists, as in the kernel: there
// is nothing to insert or delete, and no lock.
#pragma once

#include "runtime/maps/format.h"
#include "runtime/maps/hash_map.h"

#include <cstdint>

namespace ubtrace::runtime::maps {

long array_update(MapHeader *map, const void *key, const void *value,
                  uint64_t flags);
long array_for_each(MapHeader *map, MapElemCallback callback, void *context);
// The CLI's, on its trusted copy (hash_map.h).
long array_update(const TrustedMap &map, const void *key, const void *value,
                  uint64_t flags);
long array_for_each(const TrustedMap &map, MapElemCallback callback,
                    void *context);

} // namespace ubtrace::runtime::maps
