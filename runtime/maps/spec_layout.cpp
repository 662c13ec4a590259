#include "runtime/maps/spec_layout.h"

#include "runtime/maps/format.h"

namespace ubtrace::runtime::maps {

Result<MapLayout> layout_for(const MapSpec &spec) {
  MapLayout layout;
  layout.kind = spec.kind;
  // Arrays are indexed by a u32, whatever the specification's key says
  // (scalar maps have no key at all).
  layout.key_size = is_hash(spec.kind) ? spec.key_size : 4;
  layout.value_size = spec.value_size;
  if (spec.kind == MapKind::RingBuf) // max_entries: bytes, as in the kernel
    layout.key_size = layout.value_size = 0;
  layout.max_entries = spec.max_entries;
  auto placed = place_map(layout, 1);
  if (!placed)
    return make_error(spec.name + ": " + placed.error());
  return layout;
}

Result<std::vector<MapLayout>> layouts_for(const std::vector<MapSpec> &specs) {
  std::vector<MapLayout> layouts;
  layouts.reserve(specs.size());
  for (const MapSpec &spec : specs) {
    auto layout = layout_for(spec);
    if (!layout)
      return std::move(layout).take_error();
    layouts.push_back(*layout);
  }
  return layouts;
}

} // namespace ubtrace::runtime::maps
