// Merging a probe module's PTX into a CUDA module's PTX: the probe's
// functions, globals and extern declarations go right after the module's
// header directives, renamed where they would clash with the module's own
// module-scope names; the module's .version is raised if the probe needs a
// newer one; a probe that needs a newer target or another address size is
// refused.
#pragma once

#include "runtime/gpu/ptx_module.h"

#include <string>
#include <utility>
#include <vector>

namespace ubtrace::runtime::gpu {

struct ProbeMerge {
  std::string text; // the probe's items, renamed, to insert after the header
  // probe name -> name in the merged module, for every renamed symbol.
  std::vector<std::pair<std::string, std::string>> renamed;
  uint32_t version_major = 0, version_minor = 0; // what the merge needs

  // The name a probe symbol has in the merged module.
  std::string name_in_module(std::string_view probe_name) const;
};

// Plans the merge of the parsed probe module into the parsed module.
Result<ProbeMerge> plan_probe_merge(const PtxModule &module,
                                    const PtxModule &probe);

} // namespace ubtrace::runtime::gpu
