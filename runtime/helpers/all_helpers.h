// Every helper a host probe program may call, with its implementation:
// the maps' (runtime/maps) and the process's (host_helpers.h). The CLI's
// interpreter and the agent bind programs against the same table.
#pragma once

#include "runtime/helpers/host_helpers.h"
#include "runtime/helpers/process_facts.h"
#include "runtime/maps/helper_table.h"
#include "runtime/vm/interpreter.h"

namespace ubtrace::runtime::helpers {

// Binding the helpers also prepares what they read at a hit
// (process_facts.h): off the probe path, in the CLI and the agent alike.
inline vm::HelperImpls all_helper_impls() {
  prepare_process_facts();
  vm::HelperImpls h;
  for (const auto &e : maps::map_helpers())
    h.set(e.id, e.fn);
  for (const auto &e : host_helpers())
    h.set(e.id, e.fn);
  return h;
}

} // namespace ubtrace::runtime::helpers
