#include "backends/output/output.h"

#include <algorithm>

namespace ubtrace::output {

void print_maps_at_exit(Output &out, std::vector<PrintedMap> maps) {
  out.end();
  std::sort(
      maps.begin(), maps.end(),
      [](const PrintedMap &a, const PrintedMap &b) { return a.name < b.name; });
  for (const auto &m : maps)
    out.map(m);
}

} // namespace ubtrace::output
