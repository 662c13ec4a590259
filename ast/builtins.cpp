#include "ast/builtins.h"

#include <cctype>
#include <iterator>

namespace ubtrace::ast {

namespace {

constexpr BuiltinVarInfo kVars[] = {
#define UBT_BUILTIN_VAR(id, name, probes) {BuiltinVar::id, name, probes},
#include "ast/builtins.def"
#undef UBT_BUILTIN_VAR
};

constexpr BuiltinFnInfo kFns[] = {
#define UBT_BUILTIN_FN(id, name, min, max, probes, flags)                      \
  {BuiltinFn::id, name, min, max, probes, flags},
#include "ast/builtins.def"
#undef UBT_BUILTIN_FN
};

constexpr BuiltinFnInfo kUser = {BuiltinFn::User, "",     0,
                                 SIZE_MAX,        PS_ALL, BF_NONE};

constexpr bool vars_in_order() {
  for (size_t i = 0; i < std::size(kVars); i++)
    if (static_cast<size_t>(kVars[i].var) != i)
      return false;
  return true;
}
constexpr bool fns_in_order() {
  for (size_t i = 0; i < std::size(kFns); i++)
    if (static_cast<size_t>(kFns[i].fn) != i)
      return false;
  return static_cast<size_t>(BuiltinFn::User) == std::size(kFns);
}
static_assert(vars_in_order() && fns_in_order(),
              "builtins.def rows index their enums");

} // namespace

int builtin_arg_index(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix)
    return -1;
  auto digits = name.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0')
    return -1;
  int n = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || n > 1000)
      return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::optional<BuiltinVarRef> lookup_builtin(std::string_view name) {
  for (const auto &b : kVars)
    if (b.var != BuiltinVar::Arg && b.var != BuiltinVar::Sarg && b.name == name)
      return BuiltinVarRef{b.var, 0};
  if (int n = builtin_arg_index(name, "arg"); n >= 0)
    return BuiltinVarRef{BuiltinVar::Arg, n};
  if (int n = builtin_arg_index(name, "sarg"); n >= 0)
    return BuiltinVarRef{BuiltinVar::Sarg, n};
  return std::nullopt;
}

bool is_builtin_name(std::string_view name) {
  return lookup_builtin(name).has_value();
}

const BuiltinVarInfo &builtin_var_info(BuiltinVar v) {
  return kVars[static_cast<size_t>(v)];
}

const std::vector<std::string> &builtin_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto &b : kVars)
      v.push_back(
          std::string(b.name) +
          (b.var == BuiltinVar::Arg || b.var == BuiltinVar::Sarg ? "0" : ""));
    return v;
  }();
  return names;
}

std::optional<BuiltinFn> lookup_function(std::string_view name) {
  for (const auto &f : kFns)
    if (f.name == name)
      return f.fn;
  return std::nullopt;
}

const BuiltinFnInfo &builtin_fn_info(BuiltinFn f) {
  return f == BuiltinFn::User ? kUser : kFns[static_cast<size_t>(f)];
}

const BuiltinFnInfo *builtin_fn_table(size_t &count) {
  count = std::size(kFns);
  return kFns;
}

const BuiltinVarInfo *builtin_var_table(size_t &count) {
  count = std::size(kVars);
  return kVars;
}

} // namespace ubtrace::ast
