// Dumps a tree for `-d ast` (as parsed) and `-d types` (with the type of
// every expression).
#pragma once

#include "ast/ast.h"

#include <ostream>

namespace ubtrace::ast {

void print_ast(std::ostream &out, Program &program, bool with_types);

} // namespace ubtrace::ast
