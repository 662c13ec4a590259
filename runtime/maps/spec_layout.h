// From the bundle's map specifications to region layouts.
#pragma once

#include "runtime/bundle.h"
#include "runtime/maps/layout.h"
#include "runtime/result.h"

#include <vector>

namespace ubtrace::runtime::maps {

Result<MapLayout> layout_for(const MapSpec &spec);
// In bundle order, so Region::map(i) is the map of bundle.maps[i].
Result<std::vector<MapLayout>> layouts_for(const std::vector<MapSpec> &specs);

} // namespace ubtrace::runtime::maps
