// The probe module's map table (UBT_GPU_MAP_TABLE, device_maps_abi.h) with
// a CUDA context's device map addresses written in: the agent does this
// once per context, before it rewrites modules with the result, so every
// module it loads reaches the same device maps without a post-load copy.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ubtrace::runtime::gpu {

// Replaces the declaration of the table in `probe_ptx` by an initialised
// one holding `addresses` (which must be as many as the table's entries).
// A module that declares no table (its probes use no map) comes back as it
// is.
Result<std::string> bake_map_table(std::string_view probe_ptx,
                                   std::span<const uint64_t> addresses);

} // namespace ubtrace::runtime::gpu
