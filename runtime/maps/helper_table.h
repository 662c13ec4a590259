// This library's helpers by BPF helper id, with the uniform signature the
// interpreter calls every helper through (five u64 arguments, u64 result).
// The JIT may call the typed functions of helpers.h directly; these entries
// only adapt the types. bpf_for_each_map_elem is not here: the VM runs it and
// takes ubt_map_iterate as the map's iteration function.
#pragma once

#include "runtime/maps/helpers.h"

#include <cstdint>
#include <span>

namespace ubtrace::runtime::maps {

using UniformHelper = uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t,
                                   uint64_t);

struct HelperEntry {
  int32_t id; // BPF_FUNC_*
  const char *name;
  UniformHelper fn;
};

std::span<const HelperEntry> map_helpers();
// The same helpers as the CLI runs them on the traced process's region
// (helpers.h, maps::cli), and its MapBinding::for_each.
std::span<const HelperEntry> cli_map_helpers();
long cli_map_iterate(void *map, ubt_map_elem_callback callback, void *context);

// For direct value access (BPF_PSEUDO_MAP_VALUE, global data): the address
// of an Array map's first value, values following at 8-byte-rounded strides
// as in the kernel; nullptr for other kinds (per-slot arrays included: their
// values depend on the calling thread).
void *array_value_base(void *map);
// The address of entry `entry`'s value in an Array map of a trusted region
// (the CLI's own), nullptr past its end or for other kinds.
void *array_value(void *map, uint32_t entry);

} // namespace ubtrace::runtime::maps
