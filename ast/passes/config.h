// The config block: known settings with values of the right kind.
#pragma once

#include <string>
#include <vector>

#include "ast/context.h"

namespace ubtrace::ast {

bool run_config_pass(ASTContext &ctx);

enum class ConfigKind { Integer, Boolean, String, Choice };
struct ConfigSetting {
  std::string name; // canonical: lowercase, no prefix
  ConfigKind kind;
  std::vector<std::string> choices; // Choice
  std::string default_value;
  std::string help;
};

// Every setting ubtrace knows, as script config and as UBTRACE_<NAME>
// (or BPFTRACE_<NAME>) environment variables.
const std::vector<ConfigSetting> &config_settings();
const ConfigSetting *find_config_setting(const std::string &name);
// "BPFTRACE_MAX_STRLEN", "UBTRACE_MAX_STRLEN", "max_strlen" -> "max_strlen"
std::string canonical_config_name(const std::string &name);
// Checks a value; returns the normalised value or an error message.
bool check_config_value(const ConfigSetting &s, const std::string &value,
                        std::string &normalised, std::string &error);

} // namespace ubtrace::ast
