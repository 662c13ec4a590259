// The table of config variables, from config.def (see config.h).
#include "runtime/config/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <strings.h>

namespace ubtrace::runtime {
namespace {

#define UBT_CONFIG_SPELLING(e, spelling) spelling,
#define UBT_CONFIG_ENUM(Enum, VALUES)                                          \
  constexpr std::string_view k##Enum##Spellings[] = {                          \
      VALUES(UBT_CONFIG_SPELLING)};
#include "runtime/config/config.def"
#undef UBT_CONFIG_SPELLING

// Values reach store() normalised (check_config_value): digits in range,
// "true"/"false", a choice's spelling.
template <class T> void store_integer(T &field, std::string_view text) {
  T v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  field = v;
}

template <class Enum>
void store_choice(Enum &field, std::span<const std::string_view> spellings,
                  std::string_view text) {
  auto it = std::find(spellings.begin(), spellings.end(), text);
  field = static_cast<Enum>(it - spellings.begin());
}

const ConfigVar kVars[] = {
#define UBT_CONFIG_INTEGER(name, ctype, def, min, max, doc)                    \
  {#name,                                                                      \
   ConfigKind::Integer,                                                        \
   #def,                                                                       \
   uint64_t(min),                                                              \
   uint64_t(max),                                                              \
   {},                                                                         \
   doc,                                                                        \
   [](Config &c, std::string_view t) { store_integer(c.name, t); },            \
   [](const Config &c) { return std::to_string(c.name); }},
#define UBT_CONFIG_BOOLEAN(name, def, doc)                                     \
  {#name,                                                                      \
   ConfigKind::Boolean,                                                        \
   #def,                                                                       \
   0,                                                                          \
   0,                                                                          \
   {},                                                                         \
   doc,                                                                        \
   [](Config &c, std::string_view t) { c.name = t == "true"; },                \
   [](const Config &c) { return std::string(c.name ? "true" : "false"); }},
#define UBT_CONFIG_STRING(name, def, doc)                                      \
  {#name,                                                                      \
   ConfigKind::String,                                                         \
   def,                                                                        \
   0,                                                                          \
   0,                                                                          \
   {},                                                                         \
   doc,                                                                        \
   [](Config &c, std::string_view t) { c.name = std::string(t); },             \
   [](const Config &c) { return c.name; }},
#define UBT_CONFIG_CHOICE(name, Enum, def, doc)                                \
  {#name,                                                                      \
   ConfigKind::Choice,                                                         \
   k##Enum##Spellings[static_cast<size_t>(Enum::def)],                         \
   0,                                                                          \
   0,                                                                          \
   k##Enum##Spellings,                                                         \
   doc,                                                                        \
   [](Config &c, std::string_view t) {                                         \
     store_choice(c.name, k##Enum##Spellings, t);                              \
   },                                                                          \
   [](const Config &c) {                                                       \
     return std::string(k##Enum##Spellings[static_cast<size_t>(c.name)]);      \
   }},
#include "runtime/config/config.def"
};

} // namespace

#define UBT_CONFIG_ENUM(Enum, VALUES)                                          \
  template <> std::span<const std::string_view> config_spellings<Enum>() {     \
    return k##Enum##Spellings;                                                 \
  }
#include "runtime/config/config.def"

const char *config_kind_name(ConfigKind k) {
  switch (k) {
  case ConfigKind::Integer:
    return "integer";
  case ConfigKind::Boolean:
    return "boolean";
  case ConfigKind::String:
    return "string";
  case ConfigKind::Choice:
    return "choice";
  }
  return "";
}

std::span<const ConfigVar> config_vars() {
  return kVars;
}

std::string canonical_config_name(std::string_view name) {
  std::string n(name);
  for (std::string_view prefix :
       {"BPFTRACE_", "UBTRACE_", "bpftrace_", "ubtrace_"})
    if (n.rfind(prefix, 0) == 0) {
      n = n.substr(prefix.size());
      break;
    }
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return n;
}

const ConfigVar *find_config_var(std::string_view name) {
  std::string n = canonical_config_name(name);
  for (const auto &v : kVars)
    if (v.name == n)
      return &v;
  return nullptr;
}

bool check_config_value(const ConfigVar &s, std::string_view value,
                        std::string &normalised, std::string &error) {
  const std::string name(s.name);
  const std::string given(value);
  switch (s.kind) {
  case ConfigKind::Integer: {
    auto range = [&] {
      return " in [" + std::to_string(s.min) + ", " + std::to_string(s.max) +
             "], got '" + given + "'";
    };
    if (value.empty() ||
        !std::all_of(value.begin(), value.end(),
                     [](unsigned char c) { return std::isdigit(c); })) {
      error = name + " expects a non-negative integer" + range();
      return false;
    }
    // Digits only: what can still go wrong is a value past 2^64 - 1.
    uint64_t v = 0;
    bool overflow = false;
    for (char c : value)
      overflow |= __builtin_mul_overflow(v, 10, &v) ||
                  __builtin_add_overflow(v, uint64_t(c - '0'), &v);
    if (overflow || v < s.min || v > s.max) {
      error = name + " expects an integer" + range();
      return false;
    }
    normalised = std::to_string(v);
    return true;
  }
  case ConfigKind::Boolean: {
    std::string v = given;
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (v == "1" || v == "true") {
      normalised = "true";
      return true;
    }
    if (v == "0" || v == "false") {
      normalised = "false";
      return true;
    }
    error = name + " expects true or false (or 1 or 0), got '" + given + "'";
    return false;
  }
  case ConfigKind::String:
    normalised = given;
    return true;
  case ConfigKind::Choice:
    for (std::string_view c : s.choices) {
      if (strcasecmp(std::string(c).c_str(), given.c_str()) == 0) {
        normalised = std::string(c);
        return true;
      }
    }
    error =
        "Invalid value for " + name + ". Found: " + given + ". Valid values:";
    for (size_t i = 0; i < s.choices.size(); i++)
      error += (i ? ", " : " ") + std::string(s.choices[i]);
    return false;
  }
  return false;
}

bool set_config_value(Config &config, const ConfigVar &v,
                      std::string_view value, std::string &error) {
  std::string normalised;
  if (!check_config_value(v, value, normalised, error))
    return false;
  v.store(config, normalised);
  return true;
}

} // namespace ubtrace::runtime
