// Where a probe on an IFUNC goes in the traced process: the implementation
// it uses (runtime/symbols/ifunc.h), read from its memory. The rest of the
// hooking does not change.
#pragma once

#include "runtime/symbols/address_space.h"
#include "runtime/symbols/attach_point.h"
#include "runtime/symbols/binary_cache.h"

#include <string>

namespace ubtrace::backends {

// `probe` moved to its implementation in `space.pid()` when probe.ifunc;
// when that cannot be known it stays on the resolver and `why` says why.
runtime::symbols::ResolvedProbe
place_ifunc(const runtime::symbols::ResolvedProbe &probe,
            const runtime::symbols::AddressSpace &space,
            runtime::symbols::BinaryCache &cache, std::string &why);

// The one warning for the IFUNCs of attach point `attach_point` that stay
// on their resolvers: (name, why) each.
std::string unplaced_ifunc_warning(
    const std::string &attach_point, pid_t pid,
    const std::vector<std::pair<std::string, std::string>> &unplaced);

} // namespace ubtrace::backends
