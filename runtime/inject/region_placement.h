// Where the bootstrap stub maps its region: an address the injector picks
// from the target's free address space, so that it knows where to look
// for the results without asking. The stub maps with MAP_FIXED_NOREPLACE:
// if the program mapped something there meanwhile, the stub maps nothing
// and says so on its job (bootstrap_layout.h).
//
// The address is page aligned, inside the largest gap of the address
// space below the top of user space, at a random place at least 1 GiB
// (or, in a small gap, as far as the gap allows) from both of its ends:
// away from where brk grows, from the next address the kernel hands out
// top-down, and from the main stack's room to grow.
#pragma once

#include "runtime/inject/proc_maps.h"
#include "runtime/result.h"

#include <cstdint>
#include <random>
#include <vector>

namespace ubtrace::runtime::inject {

Result<uint64_t> place_region(const std::vector<MappedRegion> &maps,
                              uint64_t size, std::mt19937_64 &random);

} // namespace ubtrace::runtime::inject
