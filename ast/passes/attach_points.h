// Attach points: splits each raw attach point ("uprobe:/bin/ls:main+4",
// "interval:s:1") into its kind (ast/probe_kinds.def), target, function
// and friends, expands
// positional parameters in it, and rejects probe types that no backend of
// ubtrace runs with an error that names the ones it does.
#pragma once

#include "ast/context.h"

namespace ubtrace::ast {

bool run_attach_point_pass(ASTContext &ctx);

} // namespace ubtrace::ast
