// ast::Type (what the checker knows) to runtime::ValueType (what a printer
// needs), for map keys and values, printf arguments and print().
#pragma once

#include "ast/types.h"
#include "runtime/bundle.h"

#include <map>
#include <string>

namespace ubtrace::codegen {

// Enumerators by value, for each enum by name (ast::CTypes::enums): an
// enum-typed integer prints as its enumerator's name where one matches.
using EnumNames = std::map<std::string, std::map<int64_t, std::string>>;

runtime::ValueType to_value_type(const ast::Type &t,
                                 const EnumNames *enums = nullptr);

} // namespace ubtrace::codegen
