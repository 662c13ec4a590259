// The bundle's BPF object loaded once: every program linked, verified and
// bound to the maps of a region and to the helpers, ready for a backend.
#pragma once

#include "runtime/bundle.h"
#include "runtime/maps/region.h"
#include "runtime/result.h"
#include "runtime/vm/interpreter.h"
#include "runtime/vm/loader.h"
#include "runtime/vm/verifier.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ubtrace::backends {

class ProgramSet {
public:
  // Loads `bundle.object`, verifies the programs of host probes (those of
  // GPU probes are the GPU backend's) and binds them to `region`, whose
  // maps are the bundle's in order.
  static Result<ProgramSet> load(const runtime::Bundle &bundle,
                                 runtime::maps::Region &region);

  // The bound program of an ELF section, or null.
  const vm::BoundProgram *bound(const std::string &section) const;
  const vm::VerifiedProgram *verified(const std::string &section) const;
  const vm::Object &object() const { return object_; }
  // The object's maps as bound in this process (handles in the CLI's
  // mapping of the region).
  const std::vector<vm::MapBinding> &bindings() const { return bindings_; }

private:
  vm::Object object_;
  std::vector<vm::MapBinding> bindings_;
  std::map<std::string, vm::VerifiedProgram> verified_;
  std::map<std::string, vm::BoundProgram> bound_;
};

// The helpers a host program may call (kernel ids), with implementations.
const vm::HelperImpls &host_helper_impls();

} // namespace ubtrace::backends
