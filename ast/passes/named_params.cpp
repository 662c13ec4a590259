#include "ast/passes/named_params.h"

#include "ast/visitor.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ubtrace::ast {
namespace {

// A default or a value: a bool, an unsigned or signed integer, a string.
using ParamValue = std::variant<bool, uint64_t, int64_t, std::string>;

std::string value_text(const ParamValue &v) {
  if (auto *b = std::get_if<bool>(&v))
    return *b ? "true" : "false";
  if (auto *u = std::get_if<uint64_t>(&v))
    return std::to_string(*u);
  if (auto *i = std::get_if<int64_t>(&v))
    return std::to_string(*i);
  return std::get<std::string>(v);
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An integer as bpftrace's options take one: decimal or 0x hex, a sign for
// signed ones. Returns the error's words or nothing.
std::optional<std::string> parse_integer(const std::string &text,
                                         bool is_signed, ParamValue &out) {
  const char *s = text.c_str();
  size_t digits = (*s == '-' || *s == '+') ? 1 : 0;
  if (!std::isdigit(static_cast<unsigned char>(s[digits])))
    return std::string("invalid integer");
  errno = 0;
  char *end = nullptr;
  if (is_signed) {
    long long v = std::strtoll(s, &end, 0);
    if (*end)
      return std::string("invalid trailing bytes");
    if (errno == ERANGE)
      return std::string("value is out of range");
    out = static_cast<int64_t>(v);
  } else {
    if (*s == '-')
      return std::string("invalid integer");
    unsigned long long v = std::strtoull(s, &end, 0);
    if (*end)
      return std::string("invalid trailing bytes");
    if (errno == ERANGE)
      return std::string("value is out of range");
    out = static_cast<uint64_t>(v);
  }
  return std::nullopt;
}

class NamedParams : public Visitor<NamedParams> {
public:
  explicit NamedParams(ASTContext &ctx) : ctx_(ctx) {
    for (const auto &arg : ctx.named_args) {
      size_t eq = arg.find('=');
      if (eq == std::string::npos)
        given_[arg] = std::nullopt;
      else
        given_[arg.substr(0, eq)] = arg.substr(eq + 1);
    }
  }
  using Visitor::visit;

  void visit(Expr *&e) {
    Visitor::visit(e);
    auto *c = dyn_cast<Call>(e);
    if (c && c->name == "getopt")
      if (Expr *lit = resolve(*c))
        e = lit;
  }

  // After the whole program: options no getopt() knows, or --help.
  bool finish() {
    std::vector<std::string> unknown;
    bool help = false;
    for (const auto &[name, value] : given_) {
      if (name == "help")
        help = true;
      else if (!declared_.count(name))
        unknown.push_back("--" + name);
    }
    if (unknown.empty() && !help)
      return ok_;
    std::string hint = "expected program options:";
    if (order_.empty()) {
      hint = "no custom program options defined.";
    } else {
      for (size_t i = 0; i < order_.size(); i++) {
        const std::string &name = order_[i];
        const std::string &desc = declared_.at(name).description;
        if (help)
          hint += "\n--" + name + (desc.empty() ? "" : ": " + desc);
        else
          hint += (i ? ", --" : " --") + name;
      }
    }
    std::string message;
    for (size_t i = 0; i < unknown.size(); i++)
      message +=
          (i ? ", " : "unexpected program command line options: ") + unknown[i];
    // An error without a message prints only its hint (--help alone).
    ctx_.diags().error(Location{}) << message;
    ctx_.diags().at(ctx_.diags().all().size() - 1).hints.push_back(hint);
    return false;
  }

private:
  struct Declared {
    ParamValue def;
    std::string description;
  };
  ASTContext &ctx_;
  std::map<std::string, std::optional<std::string>> given_;
  std::map<std::string, Declared> declared_;
  std::vector<std::string> order_;
  bool ok_ = true;

  Expr *fail(const Location &loc, const std::string &why) {
    ctx_.diags().error(loc) << why;
    ok_ = false;
    return nullptr;
  }

  Expr *resolve(Call &c) {
    if (c.args.empty() || c.args.size() > 3)
      return fail(c.loc, "The 'getopt' function can take a maximum of three "
                         "arguments and a minimum of one argument.");
    auto *name = dyn_cast<String>(c.args[0]);
    if (!name)
      return fail(c.args[0]->loc,
                  "First argument to 'getopt' must be a string literal.");
    ParamValue def = false;
    if (c.args.size() >= 2) {
      Expr *d = c.args[1];
      if (auto *b = dyn_cast<Boolean>(d))
        def = b->value;
      else if (auto *s = dyn_cast<String>(d))
        def = s->value;
      else if (auto *i = dyn_cast<Integer>(d))
        def = i->negative ? ParamValue(i->as_signed()) : ParamValue(i->value);
      else
        return fail(d->loc, "Second argument to 'getopt' must be a string "
                            "literal, integer literal, or a boolean literal.");
    }
    std::string description;
    if (c.args.size() == 3) {
      auto *s = dyn_cast<String>(c.args[2]);
      if (!s)
        return fail(c.args[2]->loc, "Function 'getopt' requires the third "
                                    "parameter to be a string literal.");
      description = s->value;
    }
    if (auto it = declared_.find(name->value); it != declared_.end()) {
      if (it->second.def != def)
        return fail(c.loc, "Command line option '" + name->value +
                               "' needs to have the same default value in "
                               "all places it is used. Previous default "
                               "value: " +
                               value_text(it->second.def));
      if (!description.empty() && !it->second.description.empty() &&
          description != it->second.description)
        return fail(c.loc, "Command line option '" + name->value +
                               "' must have the same description in all "
                               "places it's used. Hint: You can wrap it in "
                               "a macro");
      if (description.empty())
        description = it->second.description;
    } else {
      order_.push_back(name->value);
    }
    declared_[name->value] = {def, description};

    ParamValue value = def;
    if (auto g = given_.find(name->value); g != given_.end()) {
      std::optional<std::string> why;
      const std::string text = g->second.value_or("true");
      if (std::holds_alternative<bool>(def)) {
        std::string l = lower(text);
        if (l == "true" || l == "1")
          value = true;
        else if (l == "false" || l == "0")
          value = false;
        else
          why = "expects a boolean (e.g. 'true')";
      } else if (std::holds_alternative<std::string>(def)) {
        if (g->second)
          value = text;
        else
          why = "expects a string";
      } else if (!g->second) {
        why = "expects an integer";
      } else {
        why = parse_integer(text, std::holds_alternative<int64_t>(def), value);
      }
      if (why)
        return fail(Location{}, "program command line option --" + name->value +
                                    " " + *why + " (value: " + text + ")");
    }
    if (auto *b = std::get_if<bool>(&value))
      return ctx_.make<Boolean>(c.loc, *b);
    if (auto *u = std::get_if<uint64_t>(&value))
      return ctx_.make<Integer>(c.loc, *u);
    if (auto *i = std::get_if<int64_t>(&value))
      return ctx_.make<Integer>(c.loc,
                                *i < 0 ? 0 - static_cast<uint64_t>(*i)
                                       : static_cast<uint64_t>(*i),
                                *i < 0);
    return ctx_.make<String>(c.loc, std::get<std::string>(value));
  }
};

} // namespace

bool run_named_params_pass(ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  NamedParams p(ctx);
  p.visit(*ctx.root);
  bool ok = p.finish();
  return ok && ctx.diags().error_count() == before;
}

} // namespace ubtrace::ast
