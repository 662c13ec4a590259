#include "ast/passes/config.h"

#include "ast/suggest.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <strings.h>

namespace ubtrace::ast {

const std::vector<ConfigSetting> &config_settings() {
  // Integer ranges: what the code reading each value can hold and still
  // work (the maps region's limits, a ring buffer size in 32 bits, the
  // CLI's buffers), documented in ubtrace(8).
  // clang-format off: one setting per row
  static const std::vector<ConfigSetting> s = {
      {"max_map_keys", ConfigKind::Integer, {}, "4096",
       "maximum number of keys of a map that has no declaration", 1, kMaxMapEntries},
      {"max_strlen", ConfigKind::Integer, {}, "64",
       "bytes read by str() and the size of strings", 1, 65536},
      {"stack_mode", ConfigKind::Choice, {"bpftrace", "perf", "raw"}, "bpftrace",
       "how stacks print"},
      {"print_maps_on_exit", ConfigKind::Boolean, {}, "true", "print all maps at exit"},
      {"perf_rb_pages", ConfigKind::Integer, {}, "64",
       "pages of the event ring buffer", 1, 65536},
      {"max_probes", ConfigKind::Integer, {}, "1024",
       "maximum number of attached probes", 1, UINT32_MAX},
      {"max_bpf_progs", ConfigKind::Integer, {}, "1024", "maximum number of programs", 1,
       UINT32_MAX},
      {"max_cat_bytes", ConfigKind::Integer, {}, "10240", "bytes printed by cat()", 1,
       uint64_t(1) << 24},
      {"max_ast_nodes", ConfigKind::Integer, {}, "0", "unused", 0, UINT32_MAX},
      {"log_size", ConfigKind::Integer, {}, "1000000", "verifier log size", 1, UINT32_MAX},
      {"on_stack_limit", ConfigKind::Integer, {}, "32",
       "bytes above which values live off the stack", 0, 512},
      {"cpp_demangle", ConfigKind::Boolean, {}, "true", "demangle C++ symbols"},
      {"lazy_symbolication", ConfigKind::Boolean, {}, "false",
       "symbolize stacks only when printed"},
      {"cache_user_symbols", ConfigKind::Choice, {"PER_PROGRAM", "PER_PID", "NONE"},
       "PER_PID", "how user symbols are cached"},
      {"missing_probes", ConfigKind::Choice, {"error", "warn", "ignore"}, "error",
       "what to do when a probe cannot attach"},
      {"str_trunc_trailer", ConfigKind::String, {}, "..", "appended to truncated strings"},
      {"show_debug_info", ConfigKind::Boolean, {}, "false",
       "file and line in printed stacks"},
      {"license", ConfigKind::String, {}, "GPL", "BPF program license"},
      {"use_blazesym", ConfigKind::Boolean, {}, "false", "unused"},
      {"unstable_macro", ConfigKind::Choice, {"error", "warn", "enable"}, "enable",
       "feature flag"},
      {"unstable_map_decl", ConfigKind::Choice, {"error", "warn", "enable"}, "enable",
       "feature flag"},
      {"unstable_import", ConfigKind::Choice, {"error", "warn", "enable"}, "enable",
       "feature flag"},
      {"unstable_tseries", ConfigKind::Choice, {"error", "warn", "enable"}, "warn",
       "feature flag"},
  };
  // clang-format on
  return s;
}

std::string canonical_config_name(const std::string &name) {
  std::string n = name;
  for (const char *prefix : {"BPFTRACE_", "UBTRACE_", "bpftrace_", "ubtrace_"})
    if (n.rfind(prefix, 0) == 0) {
      n = n.substr(std::string(prefix).size());
      break;
    }
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return n;
}

const ConfigSetting *find_config_setting(const std::string &name) {
  std::string n = canonical_config_name(name);
  for (const auto &s : config_settings())
    if (s.name == n)
      return &s;
  return nullptr;
}

bool check_config_value(const ConfigSetting &s, const std::string &value,
                        std::string &normalised, std::string &error) {
  switch (s.kind) {
  case ConfigKind::Integer: {
    auto range = [&] {
      return " in [" + std::to_string(s.min) + ", " + std::to_string(s.max) +
             "], got '" + value + "'";
    };
    if (value.empty() ||
        !std::all_of(value.begin(), value.end(),
                     [](unsigned char c) { return std::isdigit(c); })) {
      error = s.name + " expects a non-negative integer" + range();
      return false;
    }
    // Digits only: what can still go wrong is a value past 2^64 - 1.
    uint64_t v = 0;
    bool overflow = false;
    for (char c : value)
      overflow |= __builtin_mul_overflow(v, 10, &v) ||
                  __builtin_add_overflow(v, uint64_t(c - '0'), &v);
    if (overflow || v < s.min || v > s.max) {
      error = s.name + " expects an integer" + range();
      return false;
    }
    normalised = std::to_string(v);
    return true;
  }
  case ConfigKind::Boolean: {
    std::string v = value;
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
    error = s.name + " expects true or false (or 1 or 0), got '" + value + "'";
    return false;
  }
  case ConfigKind::String:
    normalised = value;
    return true;
  case ConfigKind::Choice:
    for (const auto &c : s.choices) {
      if (strcasecmp(c.c_str(), value.c_str()) == 0) {
        normalised = c;
        return true;
      }
    }
    error = s.name + " expects one of";
    for (size_t i = 0; i < s.choices.size(); i++)
      error += (i ? ", " : " ") + s.choices[i];
    error += "; got '" + value + "'";
    return false;
  }
  return false;
}

uint64_t config_integer(const std::map<std::string, std::string> &config,
                        const std::string &name) {
  auto it = config.find(name);
  const ConfigSetting *s = find_config_setting(name);
  const std::string &text = it != config.end() ? it->second
                            : s                ? s->default_value
                                               : std::string();
  return std::strtoull(text.c_str(), nullptr, 10);
}

bool run_config_pass(ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  std::vector<std::string> names;
  for (const auto &s : config_settings())
    names.push_back(s.name);
  for (auto *c : ctx.root->config) {
    const ConfigSetting *s = find_config_setting(c->key);
    if (!s) {
      auto d = ctx.diags().error(c->loc);
      d << "Unrecognized config variable: " << c->key;
      std::string hint = did_you_mean(canonical_config_name(c->key), names);
      if (!hint.empty())
        d.hint(hint);
      continue;
    }
    std::string text;
    if (auto *i = dyn_cast<Integer>(c->value)) {
      text = (i->negative ? "-" : "") + std::to_string(i->value);
    } else if (auto *str = dyn_cast<String>(c->value)) {
      text = str->value;
    } else if (auto *b = dyn_cast<Boolean>(c->value)) {
      text = b->value ? "true" : "false";
    } else if (auto *id = dyn_cast<Identifier>(c->value)) {
      text = id->name;
    } else {
      ctx.diags().error(c->value->loc)
          << "config values must be literals or identifiers";
      continue;
    }
    std::string normalised, error;
    if (!check_config_value(*s, text, normalised, error)) {
      ctx.diags().error(c->value->loc) << error;
      continue;
    }
    if (ctx.config.count(s->name))
      ctx.diags().warning(c->loc) << "duplicate config variable: " << s->name;
    ctx.config[s->name] = normalised;
  }
  return ctx.diags().error_count() == before;
}

} // namespace ubtrace::ast
