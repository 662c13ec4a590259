// How the CLI takes part in a region's protocols without trusting the
// region (trusted.h): who it is when it holds a map's insert lock or writes
// a per-slot value, and how it tells whether another slot's holder lives.
//
// A thread slot is normally claimed by locking its robust, process-shared
// glibc mutex (thread_slot.h). glibc links a robust mutex its thread holds
// into the thread's robust list through pointers stored in the mutex
// itself, and follows them when the mutex is unlocked: a process that can
// write the mutex (the traced process, through its mapping) could steer
// those updates into writes anywhere in the CLI. So the CLI never locks,
// trylocks or unlocks a mutex in the region:
//   - its slot is taken by a compare-and-swap of the slot mutex's futex
//     word from 0 (free) to an owner no thread can be (kCliOwner, above any
//     possible tid): target threads' trylock then says EBUSY and they pass
//     it by, and their liveness check (trylock) says it is held. The CLI
//     never gives it back; the slot goes with the region.
//   - a holder's liveness is read from the word: 0 (released) or
//     FUTEX_OWNER_DIED (the kernel's mark for a holder that died) means
//     gone, anything else held; a generation that moved on means gone too.
#pragma once

#include "runtime/maps/trusted.h"

#include <cstdint>

namespace ubtrace::runtime::maps {

inline constexpr int kCliOwner = 0x3fffffff; // FUTEX_TID_MASK: no tid is

// The CLI's slot in the region (claimed at the first call), or kNoSlot when
// every slot is taken; its claim generation.
uint32_t cli_slot(TrustedRegion &region);
uint32_t cli_slot_generation(TrustedRegion &region);

// Whether the thread that held `slot` at claim `generation_low14` (as ring
// records and lock words carry it) still lives. Reads only.
bool slot_holder_alive_readonly(TrustedRegion &region, uint32_t slot,
                                uint32_t generation_low14);

} // namespace ubtrace::runtime::maps
