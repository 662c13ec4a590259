#include "runtime/maps/helper_table.h"

#include "runtime/maps/format.h"
#include "runtime/maps/helpers.h"
#include "runtime/maps/map_access.h"

#include <linux/bpf.h>

namespace ubtrace::runtime::maps {
namespace {

void *ptr(uint64_t value) {
  return reinterpret_cast<void *>(value);
}
uint64_t u64(const void *value) {
  return reinterpret_cast<uint64_t>(value);
}

uint64_t lookup(uint64_t map, uint64_t key, uint64_t, uint64_t, uint64_t) {
  return u64(ubt_bpf_map_lookup_elem(ptr(map), ptr(key)));
}
uint64_t update(uint64_t map, uint64_t key, uint64_t value, uint64_t flags,
                uint64_t) {
  return static_cast<uint64_t>(
      ubt_bpf_map_update_elem(ptr(map), ptr(key), ptr(value), flags));
}
uint64_t erase(uint64_t map, uint64_t key, uint64_t, uint64_t, uint64_t) {
  return static_cast<uint64_t>(ubt_bpf_map_delete_elem(ptr(map), ptr(key)));
}
uint64_t lookup_percpu(uint64_t map, uint64_t key, uint64_t cpu, uint64_t,
                       uint64_t) {
  return u64(ubt_bpf_map_lookup_percpu_elem(ptr(map), ptr(key),
                                            static_cast<uint32_t>(cpu)));
}
uint64_t output(uint64_t ring, uint64_t data, uint64_t size, uint64_t flags,
                uint64_t) {
  return static_cast<uint64_t>(
      ubt_bpf_ringbuf_output(ptr(ring), ptr(data), size, flags));
}
uint64_t reserve(uint64_t ring, uint64_t size, uint64_t flags, uint64_t,
                 uint64_t) {
  return u64(ubt_bpf_ringbuf_reserve(ptr(ring), size, flags));
}
uint64_t submit(uint64_t data, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  ubt_bpf_ringbuf_submit(ptr(data), flags);
  return 0;
}
uint64_t discard(uint64_t data, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  ubt_bpf_ringbuf_discard(ptr(data), flags);
  return 0;
}
uint64_t query(uint64_t ring, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  return ubt_bpf_ringbuf_query(ptr(ring), flags);
}

constexpr HelperEntry kHelpers[] = {
    {BPF_FUNC_map_lookup_elem, "map_lookup_elem", lookup},
    {BPF_FUNC_map_update_elem, "map_update_elem", update},
    {BPF_FUNC_map_delete_elem, "map_delete_elem", erase},
    {BPF_FUNC_map_lookup_percpu_elem, "map_lookup_percpu_elem", lookup_percpu},
    {BPF_FUNC_ringbuf_output, "ringbuf_output", output},
    {BPF_FUNC_ringbuf_reserve, "ringbuf_reserve", reserve},
    {BPF_FUNC_ringbuf_submit, "ringbuf_submit", submit},
    {BPF_FUNC_ringbuf_discard, "ringbuf_discard", discard},
    {BPF_FUNC_ringbuf_query, "ringbuf_query", query},
};

} // namespace

std::span<const HelperEntry> map_helpers() {
  return kHelpers;
}

void *array_value_base(void *map) {
  if (kind_of(map) != MapKind::Array)
    return nullptr;
  return value_at(static_cast<const MapHeader *>(map), 0, 0);
}

} // namespace ubtrace::runtime::maps
