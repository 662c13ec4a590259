// Typed config: runtime::Config holds every config variable as a field of
// its own type, with its default, generated from the one table of
// variables (config.def). The front end fills it once: the script's config
// block (ast/passes/config.cpp), then the environment (backends/cli/
// env_config.cpp), which overrides the script as in bpftrace. From then on
// everything reads the fields: codegen, the bundle (plain data, like the
// rest of it) and the backends. No reader parses text.
//
// The same table, as config_vars(), describes each variable for the config
// pass and the environment (its name, kind, range or choices), for --info
// and for the manual's list (its default and documentation).
//
// Header and library depend on std only: the front end sees this directory
// (cmake/Layers.cmake), not the rest of runtime/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ubtrace::runtime {

// The most entries one map may have: the maps region's limit, for
// max_map_keys and for declared maps (`let @m = hash(N)`).
inline constexpr uint64_t kMaxMapEntries = uint64_t(1) << 30;

// The choices' types: enum class StackMode { Bpftrace, Perf, Raw }, ...
#define UBT_CONFIG_ENUMERATOR(e, spelling) e,
#define UBT_CONFIG_ENUM(Enum, VALUES)                                          \
  enum class Enum : uint8_t { VALUES(UBT_CONFIG_ENUMERATOR) };
#include "runtime/config/config.def"
#undef UBT_CONFIG_ENUMERATOR

struct Config {
#define UBT_CONFIG_INTEGER(name, ctype, def, min, max, doc)                    \
  ctype name = def;                                                            \
  static_assert(uint64_t(max) <= uint64_t(ctype(~ctype(0))) &&                 \
                    uint64_t(min) <= uint64_t(def) &&                          \
                    uint64_t(def) <= uint64_t(max),                            \
                #name ": the default or the range does not fit");
#define UBT_CONFIG_BOOLEAN(name, def, doc) bool name = def;
#define UBT_CONFIG_STRING(name, def, doc) std::string name = def;
#define UBT_CONFIG_CHOICE(name, Enum, def, doc) Enum name = Enum::def;
#include "runtime/config/config.def"

  template <class Archive> void serialize(Archive &ar) {
#define UBT_CONFIG_INTEGER(name, ctype, def, min, max, doc) ar(name);
#define UBT_CONFIG_BOOLEAN(name, def, doc) ar(name);
#define UBT_CONFIG_STRING(name, def, doc) ar(name);
#define UBT_CONFIG_CHOICE(name, Enum, def, doc) ar(name);
#include "runtime/config/config.def"
  }

  bool operator==(const Config &) const = default;
};

// The spellings of a choice's values, in the enum's order:
// config_spellings<StackMode>()[size_t(StackMode::Perf)] == "perf".
template <class Enum> std::span<const std::string_view> config_spellings();
#define UBT_CONFIG_ENUM(Enum, VALUES)                                          \
  template <> std::span<const std::string_view> config_spellings<Enum>();
#include "runtime/config/config.def"

template <class Enum> std::string_view config_spelling(Enum e) {
  return config_spellings<Enum>()[static_cast<size_t>(e)];
}

enum class ConfigKind : uint8_t { Integer, Boolean, String, Choice };
const char *config_kind_name(ConfigKind k); // "integer", ...

// One variable of the table.
struct ConfigVar {
  std::string_view name; // canonical: lowercase, no prefix
  ConfigKind kind;
  std::string_view default_text; // "4096", "true", "bpftrace", "GPL"
  uint64_t min = 0, max = 0;     // Integer: the values accepted
  std::span<const std::string_view> choices; // Choice: spellings
  std::string_view doc;                      // for ubtrace(8)
  // Stores a value check_config_value() normalised into its field.
  void (*store)(Config &, std::string_view normalised) = nullptr;
  // Its value in `config`, normalised as store() takes it.
  std::string (*load)(const Config &) = nullptr;
};

// Every variable, in the table's order.
std::span<const ConfigVar> config_vars();
// "BPFTRACE_MAX_STRLEN", "UBTRACE_MAX_STRLEN", "max_strlen" -> "max_strlen"
std::string canonical_config_name(std::string_view name);
// The variable of a name in any of those spellings; nullptr if none.
const ConfigVar *find_config_var(std::string_view name);
// Checks a value given as text (an integer in decimal digits: the config
// pass writes a script's literal so); returns the normalised value ("true"
// for "1", a choice in its table spelling, an integer without leading
// zeros) or an error message that names the variable and the value given.
bool check_config_value(const ConfigVar &v, std::string_view value,
                        std::string &normalised, std::string &error);
// check_config_value(), then stores the value into its field of `config`.
bool set_config_value(Config &config, const ConfigVar &v,
                      std::string_view value, std::string &error);

} // namespace ubtrace::runtime
