// ast::Type (what the checker knows) to runtime::ValueType (what a printer
// needs), for map keys and values, printf arguments and print().
#pragma once

#include "ast/types.h"
#include "runtime/bundle.h"

namespace ubtrace::codegen {

runtime::ValueType to_value_type(const ast::Type &t);

} // namespace ubtrace::codegen
