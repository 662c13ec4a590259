// Every helper a host probe program may call, with its implementation:
// the maps' (runtime/maps) and the process's (host_helpers.h). The CLI's
// interpreter and the agent bind programs against the same table.
#pragma once

#include "runtime/helpers/host_helpers.h"
#include "runtime/maps/helper_table.h"
#include "runtime/vm/interpreter.h"

namespace ubtrace::runtime::helpers {

inline vm::HelperImpls all_helper_impls() {
  vm::HelperImpls h;
  for (const auto &e : maps::map_helpers())
    h.set(e.id, e.fn);
  for (const auto &e : host_helpers())
    h.set(e.id, e.fn);
  return h;
}

} // namespace ubtrace::runtime::helpers
