// Config variables from the environment (see env_config.h).
#include "backends/cli/env_config.h"

#include <cctype>
#include <cstdlib>

namespace ubtrace::cli {
namespace {

// bpftrace's older names for some variables (its 0.17, as Debian ships it,
// reads these); `inverted` for a "no_" name of a boolean.
struct LegacyName {
  const char *variable;
  const char *setting;
  bool inverted;
};
constexpr LegacyName kLegacyNames[] = {
    {"BPFTRACE_STRLEN", "max_strlen", false},
    {"BPFTRACE_MAP_KEYS_MAX", "max_map_keys", false},
    {"BPFTRACE_CAT_BYTES_MAX", "max_cat_bytes", false},
    {"BPFTRACE_NO_CPP_DEMANGLE", "cpp_demangle", true},
};

std::string env_name(const char *prefix, const std::string &setting) {
  std::string name = prefix + setting;
  for (char &c : name)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

} // namespace

std::optional<EnvValue> env_value_for(const runtime::ConfigVar &s) {
  for (const char *prefix : {"UBTRACE_", "BPFTRACE_"}) {
    std::string name = env_name(prefix, std::string(s.name));
    if (const char *v = std::getenv(name.c_str()))
      return EnvValue{name, v};
  }
  for (const auto &legacy : kLegacyNames)
    if (s.name == legacy.setting)
      if (const char *v = std::getenv(legacy.variable))
        return EnvValue{legacy.variable, v, legacy.inverted};
  return std::nullopt;
}

Result<void> apply_environment(runtime::Config &config) {
  for (const auto &s : runtime::config_vars()) {
    auto env = env_value_for(s);
    if (!env)
      continue;
    std::string normalised, why;
    if (!runtime::check_config_value(s, env->value, normalised, why))
      return make_error(env->variable + ": " + why);
    if (env->inverted)
      normalised = normalised == "true" ? "false" : "true";
    s.store(config, normalised);
  }
  return {};
}

} // namespace ubtrace::cli
