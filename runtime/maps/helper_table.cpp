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

// The helpers of one caller (Probe: the ubt_* functions; Cli: cli::*), in
// the interpreter's uniform signature.
struct Probe {
  static constexpr auto lookup = ubt_bpf_map_lookup_elem;
  static constexpr auto update = ubt_bpf_map_update_elem;
  static constexpr auto erase = ubt_bpf_map_delete_elem;
  static constexpr auto lookup_percpu = ubt_bpf_map_lookup_percpu_elem;
  static constexpr auto output = ubt_bpf_ringbuf_output;
  static constexpr auto reserve = ubt_bpf_ringbuf_reserve;
  static constexpr auto submit = ubt_bpf_ringbuf_submit;
  static constexpr auto discard = ubt_bpf_ringbuf_discard;
  static constexpr auto query = ubt_bpf_ringbuf_query;
};
struct Cli {
  static constexpr auto lookup = cli::map_lookup_elem;
  static constexpr auto update = cli::map_update_elem;
  static constexpr auto erase = cli::map_delete_elem;
  static constexpr auto lookup_percpu = cli::map_lookup_percpu_elem;
  static constexpr auto output = cli::ringbuf_output;
  static constexpr auto reserve = cli::ringbuf_reserve;
  static constexpr auto submit = cli::ringbuf_submit;
  static constexpr auto discard = cli::ringbuf_discard;
  static constexpr auto query = cli::ringbuf_query;
};

template <class F>
uint64_t lookup(uint64_t map, uint64_t key, uint64_t, uint64_t, uint64_t) {
  return u64(F::lookup(ptr(map), ptr(key)));
}
template <class F>
uint64_t update(uint64_t map, uint64_t key, uint64_t value, uint64_t flags,
                uint64_t) {
  return static_cast<uint64_t>(
      F::update(ptr(map), ptr(key), ptr(value), flags));
}
template <class F>
uint64_t erase(uint64_t map, uint64_t key, uint64_t, uint64_t, uint64_t) {
  return static_cast<uint64_t>(F::erase(ptr(map), ptr(key)));
}
template <class F>
uint64_t lookup_percpu(uint64_t map, uint64_t key, uint64_t cpu, uint64_t,
                       uint64_t) {
  return u64(F::lookup_percpu(ptr(map), ptr(key), static_cast<uint32_t>(cpu)));
}
template <class F>
uint64_t output(uint64_t ring, uint64_t data, uint64_t size, uint64_t flags,
                uint64_t) {
  return static_cast<uint64_t>(F::output(ptr(ring), ptr(data), size, flags));
}
template <class F>
uint64_t reserve(uint64_t ring, uint64_t size, uint64_t flags, uint64_t,
                 uint64_t) {
  return u64(F::reserve(ptr(ring), size, flags));
}
template <class F>
uint64_t submit(uint64_t data, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  F::submit(ptr(data), flags);
  return 0;
}
template <class F>
uint64_t discard(uint64_t data, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  F::discard(ptr(data), flags);
  return 0;
}
template <class F>
uint64_t query(uint64_t ring, uint64_t flags, uint64_t, uint64_t, uint64_t) {
  return F::query(ptr(ring), flags);
}

template <class F>
constexpr HelperEntry kHelpers[] = {
    {BPF_FUNC_map_lookup_elem, "map_lookup_elem", lookup<F>},
    {BPF_FUNC_map_update_elem, "map_update_elem", update<F>},
    {BPF_FUNC_map_delete_elem, "map_delete_elem", erase<F>},
    {BPF_FUNC_map_lookup_percpu_elem, "map_lookup_percpu_elem",
     lookup_percpu<F>},
    {BPF_FUNC_ringbuf_output, "ringbuf_output", output<F>},
    {BPF_FUNC_ringbuf_reserve, "ringbuf_reserve", reserve<F>},
    {BPF_FUNC_ringbuf_submit, "ringbuf_submit", submit<F>},
    {BPF_FUNC_ringbuf_discard, "ringbuf_discard", discard<F>},
    {BPF_FUNC_ringbuf_query, "ringbuf_query", query<F>},
};

} // namespace

std::span<const HelperEntry> map_helpers() {
  return kHelpers<Probe>;
}

std::span<const HelperEntry> cli_map_helpers() {
  return kHelpers<Cli>;
}

long cli_map_iterate(void *map, ubt_map_elem_callback callback, void *context) {
  return cli::map_iterate(map, callback, context);
}

void *array_value(void *map, uint32_t entry) {
  const TrustedMap *t = trusted_map(map);
  if (!t || t->kind != MapKind::Array || entry >= t->max_entries)
    return nullptr;
  return value_at(*t, static_cast<const MapHeader *>(map), entry, 0);
}

void *array_value_base(void *map) {
  // A map of a region this process trusts: its own geometry (setup code,
  // never the probe path: the lookup takes a lock).
  if (const TrustedMap *t = trusted_map(map))
    return t->kind == MapKind::Array
               ? value_at(*t, static_cast<const MapHeader *>(map), 0, 0)
               : nullptr;
  if (kind_of(map) != MapKind::Array)
    return nullptr;
  return value_at(static_cast<const MapHeader *>(map), 0, 0);
}

} // namespace ubtrace::runtime::maps
