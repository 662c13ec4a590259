// Real shared-memory maps (runtime/maps) for the JIT's tests and benchmark:
// a Region holding an object's maps, bound the way backends/program_set.cpp
// binds them (handle = the map's header, value_base for arrays and global
// data, ubt_map_iterate for for_each), plus a canonical dump of every map's
// contents and of the events ring, so two runs can be compared.
#pragma once

#include "runtime/bundle.h"
#include "runtime/maps/region.h"
#include "runtime/result.h"
#include "runtime/vm/interpreter.h"
#include "runtime/vm/object.h"

#include <memory>
#include <string>
#include <vector>

namespace ubtrace::jit::test {

class RegionMaps {
public:
  // The object's maps as its MapDefs describe them (BPF map types mapped to
  // the runtime's kinds; global data initialised).
  static Result<RegionMaps> for_object(const vm::Object &object);
  // The bundle's maps as the CLI lays them out, bound to the object's maps
  // by name, with abi::Globals filled in.
  static Result<RegionMaps> for_bundle(const runtime::Bundle &bundle,
                                       const vm::Object &object);

  const std::vector<vm::MapBinding> &bindings() const { return bindings_; }
  runtime::maps::Region &region() { return *region_; }

  // Every map's contents (hash entries sorted by key) and the ring's
  // records, which this consumes. Equal dumps mean equal effects.
  std::string dump();

private:
  std::unique_ptr<runtime::maps::Region> region_;
  std::vector<vm::MapBinding> bindings_;
  std::vector<std::string> names_; // per map of the region
  std::vector<runtime::MapKind> kinds_;
};

// The helpers the CLI binds host programs to: maps and process helpers.
const vm::HelperImpls &region_helpers();

} // namespace ubtrace::jit::test
