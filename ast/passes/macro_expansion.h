// Macros: `macro add_one(x) { x + 1 }` and calls `add_one(1)`, `add_one!(1)`
// or, for macros without parameters, a bare `name`. A call is replaced by a
// block expression holding the macro's body, with `x`-style parameters
// replaced by the argument expression, `$x`/`@x` parameters renamed to the
// caller's variable or map, and the body's own variables renamed so they
// cannot clash with the caller's (hygiene).
#pragma once

#include "ast/context.h"

namespace ubtrace::ast {

bool run_macro_expansion(ASTContext &ctx);

} // namespace ubtrace::ast
