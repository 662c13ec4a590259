// The config block: known variables with values of the right kind, stored
// typed into ASTContext::config (runtime/config/config.h holds the table
// of variables and the checks; the environment applies after this pass).
#pragma once

#include "ast/context.h"
#include "runtime/config/config.h"

#include <cstdint>

namespace ubtrace::ast {

bool run_config_pass(ASTContext &ctx);

// The most entries one map may have (runtime/config/config.h).
inline constexpr uint64_t kMaxMapEntries = runtime::kMaxMapEntries;

} // namespace ubtrace::ast
