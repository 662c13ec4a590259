// Runs the front end's passes in order, stopping after the first one that
// reports errors (each pass reports all the errors it finds).
#pragma once

#include "ast/context.h"

#include <string>
#include <vector>

namespace ubtrace::ast {

struct Pass {
  std::string name;
  bool (*run)(ASTContext &);
};

// The passes between parsing and code generation, in order.
const std::vector<Pass> &semantic_passes();

// Runs passes up to and including `last` (all when empty). Returns false
// when one of them failed.
bool run_passes(ASTContext &ctx, const std::vector<Pass> &passes,
                const std::string &last = "");

} // namespace ubtrace::ast
