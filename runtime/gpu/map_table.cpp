#include "runtime/gpu/map_table.h"

#include "runtime/gpu/device_maps_abi.h"
#include "runtime/gpu/ptx_module.h"

namespace ubtrace::runtime::gpu {

Result<std::string> bake_map_table(std::string_view probe_ptx,
                                   std::span<const uint64_t> addresses) {
  auto module = parse_ptx(probe_ptx);
  if (!module)
    return make_error("probe PTX: " + module.error());
  const PtxItem *table = nullptr;
  for (const PtxItem &item : module->items)
    for (std::string_view name : item.names)
      if (item.kind == PtxItemKind::Variable && name == UBT_GPU_MAP_TABLE)
        table = &item;
  // Probes that use no map (an empty body, a predicate folded to false)
  // reference no table: their module is ready as it is.
  if (!table)
    return std::string(probe_ptx);
  // The compiler declares it as bytes (.b8 NAME[8 * entries]).
  std::string_view decl =
      probe_ptx.substr(table->begin, table->end - table->begin);
  size_t open = decl.find('['), close = decl.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos)
    return make_error("the map table's declaration has no size: " +
                      std::string(decl));
  uint64_t length = 0;
  for (char c : decl.substr(open + 1, close - open - 1))
    if (c >= '0' && c <= '9')
      length = length * 10 + uint64_t(c - '0');
  bool bytes = decl.find(".b8") != std::string_view::npos;
  uint64_t entries = bytes ? length / 8 : length;
  if (entries != addresses.size())
    return make_error("the map table has " + std::to_string(entries) +
                      " entries, " + std::to_string(addresses.size()) +
                      " addresses given");
  std::string out(probe_ptx.substr(0, table->begin));
  out += ".const .align 8 .u64 " UBT_GPU_MAP_TABLE "[" +
         std::to_string(entries) + "] = {";
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(addresses[i]);
  }
  out += "};";
  out += probe_ptx.substr(table->end);
  return out;
}

} // namespace ubtrace::runtime::gpu
