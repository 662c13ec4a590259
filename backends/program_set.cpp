#include "backends/program_set.h"

#include "runtime/abi.h"
#include "runtime/helpers/all_helpers.h"
#include "runtime/maps/helper_table.h"
#include "runtime/maps/helpers.h"

#include <linux/bpf.h>

namespace ubtrace::backends {

// The CLI runs its programs (BEGIN, END, interval...) on the region the
// traced process shares and can write over: with the maps' helpers as the
// CLI runs them, on its own copy of the geometry (runtime/maps/trusted.h).
const vm::HelperImpls &host_helper_impls() {
  static const vm::HelperImpls impls = [] {
    vm::HelperImpls h = runtime::helpers::all_helper_impls();
    for (const auto &e : runtime::maps::cli_map_helpers())
      h.set(e.id, e.fn);
    return h;
  }();
  return impls;
}

Result<ProgramSet> ProgramSet::load(const runtime::Bundle &bundle,
                                    runtime::maps::Region &region) {
  auto obj = vm::load_object(bundle.object);
  if (!obj)
    return make_error("cannot load the BPF object: " + obj.error());
  ProgramSet set;
  set.object_ = std::move(*obj);

  // The object's maps, bound to the region's by name.
  std::vector<vm::MapBinding> bindings;
  for (const auto &def : set.object_.maps) {
    vm::MapBinding b;
    for (size_t i = 0; i < bundle.maps.size(); i++) {
      if (bundle.maps[i].object_name != def.name)
        continue;
      void *map = region.map(static_cast<uint32_t>(i));
      b.handle = reinterpret_cast<uint64_t>(map);
      b.value_base = runtime::maps::array_value_base(map);
      b.for_each = &runtime::maps::cli_map_iterate;
    }
    if (b.handle == 0)
      return make_error("BUG: the object's map " + def.name +
                        " is not in the bundle");
    bindings.push_back(b);
  }

  set.bindings_ = bindings;
  for (const auto &probe : bundle.probes) {
    if (probe.kind == runtime::ProbeKind::GpuKernelEntry ||
        probe.kind == runtime::ProbeKind::GpuKernelExit)
      continue;
    if (set.bound_.count(probe.section))
      continue;
    const vm::Program *prog = nullptr;
    for (const auto &p : set.object_.programs)
      if (p.section == probe.section)
        prog = &p;
    if (!prog)
      return make_error("BUG: no program in section " + probe.section);
    vm::ContextInfo ctx{abi::kHostCtxSize, false, false};
    auto verified =
        vm::verify(*prog, set.object_.maps, vm::standard_helpers(), ctx);
    if (!verified)
      return make_error("the verifier rejected the program of " + probe.name +
                        ": " + verified.error());
    auto bound = vm::bind_program(*verified, bindings, host_helper_impls());
    if (!bound)
      return make_error("cannot bind the program of " + probe.name + ": " +
                        bound.error());
    set.verified_.emplace(probe.section, std::move(*verified));
    set.bound_.emplace(probe.section, std::move(*bound));
  }
  return set;
}

const vm::BoundProgram *ProgramSet::bound(const std::string &section) const {
  auto it = bound_.find(section);
  return it == bound_.end() ? nullptr : &it->second;
}

const vm::VerifiedProgram *
ProgramSet::verified(const std::string &section) const {
  auto it = verified_.find(section);
  return it == verified_.end() ? nullptr : &it->second;
}

} // namespace ubtrace::backends
