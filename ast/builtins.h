// The builtins of the language: the variables (pid, comm, arg0, ...) and
// functions (printf, str, count, ...) of ast/builtins.def as enums and
// rows. Semantic analysis resolves each name once, into the identifier's
// `var` or the call's `fn`; later stages switch on those.
#pragma once

#include "ast/probe_kinds.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::ast {

enum class BuiltinVar : uint8_t {
#define UBT_BUILTIN_VAR(id, name, probes) id,
#include "ast/builtins.def"
#undef UBT_BUILTIN_VAR
};

// A call's target. User names a script's own `fn`.
enum class BuiltinFn : uint8_t {
#define UBT_BUILTIN_FN(id, name, min, max, probes, flags) id,
#include "ast/builtins.def"
#undef UBT_BUILTIN_FN
  User,
};

enum BuiltinFlags : unsigned {
  BF_NONE = 0,
  BF_MAP_ARG = 1u << 0,     // the first argument is a whole map
  BF_AGGREGATION = 1u << 1, // the value of a map assignment, nothing else
  BF_UNSAFE = 1u << 2,      // needs --unsafe
};

struct BuiltinVarInfo {
  BuiltinVar var;
  std::string_view name; // the prefix, for Arg and Sarg
  unsigned probes;       // ProbeSet bits where it is valid
};

struct BuiltinFnInfo {
  BuiltinFn fn;
  std::string_view name;
  size_t min_args, max_args;
  unsigned probes;
  unsigned flags;
};

// A builtin variable by name (argN and sargN by pattern, their index in
// `index`), or nothing.
struct BuiltinVarRef {
  BuiltinVar var;
  int index = 0;
};
std::optional<BuiltinVarRef> lookup_builtin(std::string_view name);
bool is_builtin_name(std::string_view name);
const BuiltinVarInfo &builtin_var_info(BuiltinVar v);
// Names for "did you mean" hints (arg0, sarg0 for their families).
const std::vector<std::string> &builtin_names();

// A builtin function by name, or nothing (not User).
std::optional<BuiltinFn> lookup_function(std::string_view name);
const BuiltinFnInfo &builtin_fn_info(BuiltinFn f);
// Every function row, in table order.
const BuiltinFnInfo *builtin_fn_table(size_t &count);
const BuiltinVarInfo *builtin_var_table(size_t &count);

// argN -> N, sargN -> N (or -1)
int builtin_arg_index(std::string_view name, std::string_view prefix);

} // namespace ubtrace::ast
