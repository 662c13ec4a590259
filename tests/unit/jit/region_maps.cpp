#include "tests/unit/jit/region_maps.h"

#include "runtime/abi.h"
#include "runtime/helpers/host_helpers.h"
#include "runtime/maps/helper_table.h"
#include "runtime/maps/helpers.h"
#include "runtime/maps/map_reader.h"
#include "runtime/maps/ring_consumer.h"
#include "runtime/maps/spec_layout.h"

#include <algorithm>
#include <cstring>
#include <linux/bpf.h>

namespace ubtrace::jit::test {
namespace {

using runtime::MapKind;
using runtime::maps::MapLayout;

Result<MapKind> kind_of(const vm::MapDef &def) {
  switch (def.type) {
  case BPF_MAP_TYPE_HASH:
    return MapKind::Hash;
  case BPF_MAP_TYPE_LRU_HASH:
    return MapKind::LruHash;
  case BPF_MAP_TYPE_PERCPU_HASH:
    return MapKind::PerCpuHash;
  case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    return MapKind::PerCpuLruHash;
  case BPF_MAP_TYPE_ARRAY:
    return MapKind::Array;
  case BPF_MAP_TYPE_PERCPU_ARRAY:
    return MapKind::PerCpuArray;
  case BPF_MAP_TYPE_RINGBUF:
    return MapKind::RingBuf;
  }
  return make_error("map " + def.name + ": type " + std::to_string(def.type) +
                    " has no shared-memory kind");
}

std::string hex(std::span<const uint8_t> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

vm::MapBinding bind(void *map) {
  vm::MapBinding b;
  b.handle = reinterpret_cast<uint64_t>(map);
  b.value_base = runtime::maps::array_value_base(map);
  b.for_each = &ubt_map_iterate;
  return b;
}

} // namespace

Result<RegionMaps> RegionMaps::for_object(const vm::Object &object) {
  std::vector<MapLayout> layouts;
  RegionMaps out;
  for (const vm::MapDef &def : object.maps) {
    auto kind = kind_of(def);
    if (!kind)
      return std::move(kind).take_error();
    MapLayout layout{*kind, def.key_size, def.value_size, def.max_entries};
    if (*kind == MapKind::RingBuf)
      layout.key_size = layout.value_size = 0;
    layouts.push_back(layout);
    out.names_.push_back(def.name);
    out.kinds_.push_back(*kind);
  }
  auto region = runtime::maps::Region::create(layouts);
  if (!region)
    return make_error("cannot create the maps: " + region.error());
  out.region_ = std::make_unique<runtime::maps::Region>(std::move(*region));
  for (uint32_t i = 0; i < object.maps.size(); ++i) {
    vm::MapBinding b = bind(out.region_->map(i));
    const vm::MapDef &def = object.maps[i];
    if (def.is_global_data && b.value_base)
      std::memcpy(b.value_base, def.initial_value.data(),
                  std::min<size_t>(def.initial_value.size(), def.value_size));
    out.bindings_.push_back(b);
  }
  return out;
}

Result<RegionMaps> RegionMaps::for_bundle(const runtime::Bundle &bundle,
                                          const vm::Object &object) {
  auto layouts = runtime::maps::layouts_for(bundle.maps);
  if (!layouts)
    return make_error("cannot lay out the maps: " + layouts.error());
  auto region = runtime::maps::Region::create(*layouts);
  if (!region)
    return make_error("cannot create the maps: " + region.error());
  RegionMaps out;
  out.region_ = std::make_unique<runtime::maps::Region>(std::move(*region));
  for (uint32_t i = 0; i < bundle.maps.size(); ++i) {
    out.names_.push_back(bundle.maps[i].name);
    out.kinds_.push_back(bundle.maps[i].kind);
    if (bundle.maps[i].role != runtime::MapRole::Globals)
      continue;
    // Fixed values instead of the session's clock: runs must compare equal.
    if (auto *g = static_cast<abi::Globals *>(
            runtime::maps::array_value_base(out.region_->map(i))))
      *g = abi::Globals{1000, out.region_->thread_slots(), 0};
  }
  for (const vm::MapDef &def : object.maps) {
    auto it =
        std::find_if(bundle.maps.begin(), bundle.maps.end(),
                     [&](const auto &m) { return m.object_name == def.name; });
    if (it == bundle.maps.end())
      return make_error("the object's map " + def.name +
                        " is not in the bundle");
    out.bindings_.push_back(
        bind(out.region_->map(uint32_t(it - bundle.maps.begin()))));
  }
  return out;
}

std::string RegionMaps::dump() {
  std::string out;
  for (uint32_t i = 0; i < region_->map_count(); ++i) {
    void *map = region_->map(i);
    out += names_[i] + ":\n";
    if (kinds_[i] == MapKind::RingBuf) {
      runtime::maps::RingConsumer consumer(map);
      consumer.drain([&](std::span<const uint8_t> record) {
        out += "  event " + hex(record) + "\n";
        return true;
      });
      continue;
    }
    runtime::maps::MapSnapshot snap = runtime::maps::snapshot(map);
    std::vector<std::string> lines;
    for (size_t e = 0; e < snap.entries; ++e) {
      std::string line = "  " + hex(snap.key(e)) + " =";
      for (uint32_t s = 0; s < snap.info.slots; ++s)
        line += " " + hex(snap.value(e, s));
      lines.push_back(line + "\n");
    }
    std::sort(lines.begin(), lines.end());
    for (const std::string &line : lines)
      out += line;
  }
  return out;
}

const vm::HelperImpls &region_helpers() {
  static const vm::HelperImpls impls = [] {
    vm::HelperImpls h;
    for (const auto &e : runtime::maps::map_helpers())
      h.set(e.id, e.fn);
    for (const auto &e : runtime::helpers::host_helpers())
      h.set(e.id, e.fn);
    return h;
  }();
  return impls;
}

} // namespace ubtrace::jit::test
