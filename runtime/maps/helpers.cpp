#include "runtime/maps/helpers.h"

#include "runtime/maps/actor.h"
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

// The operations once, for both callers: the probe path (G = the header,
// ProbeActor) and the CLI (G = its TrustedMap, CliActor). `on(g, m)` picks
// the hash_*/array_* overload of that caller.
MapHeader *on(const MapHeader &, MapHeader *m) {
  return m;
}
const TrustedMap &on(const TrustedMap &g, MapHeader *) {
  return g;
}

// Out of line: inlined, the hash path's registers would be saved on every
// array lookup too (the scalar `@ = count()` path).
// (Actors are a pointer: passed by value, so this can be a tail call.)
template <class G, class A>
__attribute__((noinline)) void *lookup_hash(const G &g, MapHeader *m, A actor,
                                            const void *key) {
  return hash_lookup_in(g, m, key, [&actor] { return actor.slot(); });
}

template <class G, class A>
void *lookup(const G &g, MapHeader *m, A actor, const void *key) {
  switch (g.kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return lookup_hash(g, m, actor, key);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return array_lookup_in(g, m, key, [&actor] { return actor.slot(); });
  case MapKind::RingBuf:
    return nullptr; // rings hold no elements
  }
  return nullptr;
}

template <class G>
void *lookup_percpu(const G &g, MapHeader *m, const void *key, uint32_t cpu) {
  switch (g.kind) {
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
  if (cpu >= slots_in_use(g, m))
    return nullptr;
  uint32_t entry;
  if (g.kind == MapKind::PerCpuArray) {
    std::memcpy(&entry, key, sizeof entry);
    if (entry >= g.max_entries)
      return nullptr;
  } else {
    const Found found = hash_find(g, m, key, hash_key(key, g.key_size));
    if (!found)
      return nullptr;
    entry = found.entry;
  }
  return value_at(g, m, entry, cpu);
}

template <class G>
long update(const G &g, MapHeader *m, const void *key, const void *value,
            uint64_t flags) {
  switch (g.kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return hash_update(on(g, m), key, value, flags);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return array_update(on(g, m), key, value, flags);
  case MapKind::RingBuf:
    return -EINVAL;
  }
  return -EINVAL;
}

template <class G> long erase(const G &g, MapHeader *m, const void *key) {
  switch (g.kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return hash_delete(on(g, m), key);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return -EINVAL; // array elements cannot be deleted
  case MapKind::RingBuf:
    return -EINVAL;
  }
  return -EINVAL;
}

template <class G>
long iterate(const G &g, MapHeader *m, ubt_map_elem_callback callback,
             void *context) {
  switch (g.kind) {
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    return hash_for_each(on(g, m), callback, context);
  case MapKind::Array:
  case MapKind::PerCpuArray:
    return array_for_each(on(g, m), callback, context);
  case MapKind::RingBuf:
    return -EINVAL;
  }
  return -EINVAL;
}

// The CLI's map of a handle: only maps of its trusted regions.
MapHeader *cli_header(const TrustedMap *t) {
  return reinterpret_cast<MapHeader *>(t->header);
}
const TrustedMap *cli_map(void *map) {
  const TrustedMap *t = trusted_map(map);
  return t && t->kind != MapKind::RingBuf ? t : nullptr;
}
const TrustedMap *cli_ring(void *ring) {
  const TrustedMap *t = trusted_map(ring);
  return t && t->kind == MapKind::RingBuf ? t : nullptr;
}

} // namespace

extern "C" {

void *ubt_bpf_map_lookup_elem(void *map, const void *key) {
  MapHeader *m = header(map);
  return lookup(*m, m, ProbeActor{m}, key);
}

void *ubt_bpf_map_lookup_percpu_elem(void *map, const void *key, uint32_t cpu) {
  MapHeader *m = header(map);
  return lookup_percpu(*m, m, key, cpu);
}

long ubt_bpf_map_update_elem(void *map, const void *key, const void *value,
                             uint64_t flags) {
  MapHeader *m = header(map);
  return update(*m, m, key, value, flags);
}

long ubt_bpf_map_delete_elem(void *map, const void *key) {
  MapHeader *m = header(map);
  return erase(*m, m, key);
}

long ubt_map_iterate(void *map, ubt_map_elem_callback callback, void *context) {
  MapHeader *m = header(map);
  return iterate(*m, m, callback, context);
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

namespace ubtrace::runtime::maps::cli {

void *map_lookup_elem(void *map, const void *key) {
  const TrustedMap *t = cli_map(map);
  return t ? lookup(*t, cli_header(t), CliActor{t->region}, key) : nullptr;
}

void *map_lookup_percpu_elem(void *map, const void *key, uint32_t cpu) {
  const TrustedMap *t = cli_map(map);
  return t ? lookup_percpu(*t, cli_header(t), key, cpu) : nullptr;
}

long map_update_elem(void *map, const void *key, const void *value,
                     uint64_t flags) {
  const TrustedMap *t = cli_map(map);
  return t ? update(*t, cli_header(t), key, value, flags) : -EINVAL;
}

long map_delete_elem(void *map, const void *key) {
  const TrustedMap *t = cli_map(map);
  return t ? erase(*t, cli_header(t), key) : -EINVAL;
}

long map_iterate(void *map, ubt_map_elem_callback callback, void *context) {
  const TrustedMap *t = cli_map(map);
  return t ? iterate(*t, cli_header(t), callback, context) : -EINVAL;
}

long ringbuf_output(void *ringbuf, const void *data, uint64_t size,
                    uint64_t flags) {
  const TrustedMap *t = cli_ring(ringbuf);
  return t ? ring_output(*t, data, size, flags) : -EINVAL;
}

void *ringbuf_reserve(void *ringbuf, uint64_t size, uint64_t flags) {
  const TrustedMap *t = cli_ring(ringbuf);
  return t && flags == 0 ? ring_reserve(*t, size) : nullptr;
}

void ringbuf_submit(void *data, uint64_t flags) {
  if (const TrustedMap *t = trusted_ring_holding(data))
    ring_commit(*t, data, flags, /*discard=*/false);
}

void ringbuf_discard(void *data, uint64_t flags) {
  if (const TrustedMap *t = trusted_ring_holding(data))
    ring_commit(*t, data, flags, /*discard=*/true);
}

uint64_t ringbuf_query(void *ringbuf, uint64_t flags) {
  const TrustedMap *t = cli_ring(ringbuf);
  return t ? ring_query(*t, flags) : 0;
}

} // namespace ubtrace::runtime::maps::cli
