// The config block: known settings with values of the right kind.
#pragma once

#include "ast/context.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ubtrace::ast {

bool run_config_pass(ASTContext &ctx);

enum class ConfigKind { Integer, Boolean, String, Choice };
struct ConfigSetting {
  std::string name; // canonical: lowercase, no prefix
  ConfigKind kind;
  std::vector<std::string> choices; // Choice
  std::string default_value;
  std::string help;
  // Integer: the values accepted. Every reader of an integer setting parses
  // the normalised decimal text this pass leaves, so a value in range is
  // one every reader can hold (no 32-bit truncation, no overflow).
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
};

// The most entries one map may have: the maps region's limit, for
// max_map_keys and for declared maps (`let @m = hash(N)`).
inline constexpr uint64_t kMaxMapEntries = uint64_t(1) << 30;

// Every setting ubtrace knows, as script config and as UBTRACE_<NAME>
// (or BPFTRACE_<NAME>) environment variables.
const std::vector<ConfigSetting> &config_settings();
const ConfigSetting *find_config_setting(const std::string &name);
// "BPFTRACE_MAX_STRLEN", "UBTRACE_MAX_STRLEN", "max_strlen" -> "max_strlen"
std::string canonical_config_name(const std::string &name);
// Checks a value; returns the normalised value or an error message that
// names the setting and the value given.
bool check_config_value(const ConfigSetting &s, const std::string &value,
                        std::string &normalised, std::string &error);
// The value of an integer setting in `config` (checked and normalised by
// the config pass or the environment), else its default.
uint64_t config_integer(const std::map<std::string, std::string> &config,
                        const std::string &name);

} // namespace ubtrace::ast
