// Trees nested very deeply would overflow the stack of the recursive passes
// and of code generation: the front end refuses them with an error instead.
#pragma once

#include "ast/context.h"

namespace ubtrace::ast {

// More levels of nested expressions and statements than any script needs,
// and few enough that a sanitizer build's visitors stay within 8 MiB.
constexpr int kMaxNestingDepth = 500;

// Reports an error at the first node nested deeper than kMaxNestingDepth.
// Returns false when it did.
bool check_nesting_depth(ASTContext &ctx);

} // namespace ubtrace::ast
