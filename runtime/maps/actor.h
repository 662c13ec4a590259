// Who runs a map operation (map_access.h's geometry G says where the map
// is): which per-slot value is theirs, how they appear as a holder of a
// map's insert lock, and how they judge another holder.
//
//   ProbeActor  a thread of a process that maps the region (the probe path
//               and the agent): its thread slot (thread_slot.h), liveness
//               by trylock of the holder's slot mutex.
//   CliActor    the CLI on the traced process's region (cli_identity.h):
//               its own slot held without glibc, liveness read from the
//               mutex word, never locked.
#pragma once

#include "runtime/maps/cli_identity.h"
#include "runtime/maps/format.h"
#include "runtime/maps/thread_slot.h"
#include "runtime/maps/trusted.h"

#include <cstdint>

namespace ubtrace::runtime::maps {

struct ProbeActor {
  const MapHeader *map;
  uint32_t slot() const { return thread_slot(map); }
  // Valid right after slot() returned one.
  uint32_t generation() const { return thread_slot_generation(); }
  bool borrowed() const { return thread_slot_borrowed(); }
  bool holder_alive(uint32_t slot, uint32_t generation_low14) const {
    return slot_holder_alive(region_of(map), slot, generation_low14);
  }
  // The CPU time of a holder in this process; -1 for one elsewhere.
  int64_t holder_cpu_ns(uint32_t slot) const {
    return slot_holder_cpu_ns(region_of(map), slot);
  }
  // Whether the caller really is the thread its slot names (not a _Fork or
  // vfork child running with its parent's thread's slot).
  bool is_slot_owner(uint32_t slot) const {
    return holds_slot_mutex(region_of(map), slot);
  }
};

struct CliActor {
  TrustedRegion *region;
  uint32_t slot() const { return cli_slot(*region); }
  uint32_t generation() const { return cli_slot_generation(*region); }
  bool borrowed() const { return false; }
  bool holder_alive(uint32_t slot, uint32_t generation_low14) const {
    return slot_holder_alive_readonly(*region, slot, generation_low14);
  }
  int64_t holder_cpu_ns(uint32_t) const { return -1; } // not the CLI's
  // The CLI never leaves an insert half-done: its own hold is not taken
  // over.
  bool is_slot_owner(uint32_t) const { return false; }
};

} // namespace ubtrace::runtime::maps
