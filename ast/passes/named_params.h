// Named parameters: getopt("name"[, default[, "description"]]) reads the
// option --name[=value] given after `--` on the command line. Known when
// compiling, like $1: each call becomes the literal it resolves to (a bool,
// an integer or a string, the default's type), so a script compiled with
// other options is another program. Options no getopt() names are an
// error; --help lists the ones that are.
#pragma once

#include "ast/context.h"

namespace ubtrace::ast {

bool run_named_params_pass(ASTContext &ctx);

} // namespace ubtrace::ast
