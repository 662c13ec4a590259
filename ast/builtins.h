// The builtin variables of the language (pid, comm, arg0, ...): their names
// and types, shared by the parser (a parenthesised builtin is never a cast)
// and semantic analysis.
#pragma once

#include "ast/probe_kinds.h"
#include "ast/types.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::ast {

struct BuiltinInfo {
  std::string name;
  unsigned probes; // ProbeSet bits where it is valid
};

// Known builtin, or nothing. arg0..argN and sarg0..sargN are matched by
// pattern.
std::optional<BuiltinInfo> lookup_builtin(std::string_view name);
bool is_builtin_name(std::string_view name);
const std::vector<std::string> &builtin_names();

// argN -> N, sargN -> N (or -1)
int builtin_arg_index(std::string_view name, std::string_view prefix);

} // namespace ubtrace::ast
