// Semantic analysis: resolves the type of every expression, map and
// variable, and checks the program as bpftrace does (builtins and the probe
// types that allow them, function arity and argument types, aggregations,
// printf formats against their arguments, map key and value consistency,
// variable scoping). Fills ctx.maps for code generation.
#pragma once

#include "ast/context.h"

namespace ubtrace::ast {

bool run_semantic_analysis(ASTContext &ctx);

} // namespace ubtrace::ast
