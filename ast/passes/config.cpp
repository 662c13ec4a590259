// The config pass: each assignment of the script's config block checked
// against the table of variables (runtime/config) and stored typed.
#include "ast/passes/config.h"

#include "ast/suggest.h"

#include <set>
#include <string>
#include <vector>

namespace ubtrace::ast {

bool run_config_pass(ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  std::vector<std::string> names;
  for (const auto &v : runtime::config_vars())
    names.emplace_back(v.name);
  std::set<std::string_view> seen;
  for (auto *c : ctx.root->config) {
    const runtime::ConfigVar *s = runtime::find_config_var(c->key);
    if (!s) {
      auto d = ctx.diags().error(c->loc);
      d << c->key << ": not a known configuration option";
      std::string hint =
          did_you_mean(runtime::canonical_config_name(c->key), names);
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
    std::string error;
    if (!runtime::set_config_value(ctx.config, *s, text, error)) {
      ctx.diags().error(c->value->loc) << error;
      continue;
    }
    if (!seen.insert(s->name).second)
      ctx.diags().warning(c->loc) << "duplicate config variable: " << s->name;
  }
  return ctx.diags().error_count() == before;
}

} // namespace ubtrace::ast
