#include "ast/passes/macro_expansion.h"

#include "ast/builtins.h"
#include "ast/depth_check.h"
#include "ast/visitor.h"
#include "runtime/config/config.h"

#include <map>
#include <set>

namespace ubtrace::ast {

namespace {

// What an argument can bind to: a `$x` parameter takes a variable, an `@x`
// parameter a whole map, a bare `x` parameter any expression.
using ParamKind = MacroParam::Kind;

ParamKind arg_kind(const Expr *e) {
  if (isa<Variable>(e))
    return ParamKind::Variable;
  if (auto *m = dyn_cast<Map>(e); m && !m->subscripted)
    return ParamKind::Map;
  return ParamKind::Expr;
}

// How far a macro's signature is from a call's arguments; 0 is a match. A
// different count dominates any number of mismatched kinds.
size_t distance(const Macro &m, const std::vector<ParamKind> &args) {
  size_t n = m.params.size();
  size_t d = 1024 * (n > args.size() ? n - args.size() : args.size() - n);
  for (size_t i = 0; i < n && i < args.size(); i++) {
    ParamKind p = m.params[i].kind;
    if ((p == ParamKind::Map || p == ParamKind::Variable) && args[i] != p)
      d++;
  }
  return d;
}

const char *kind_noun(ParamKind k) {
  switch (k) {
  case ParamKind::Variable:
    return "a variable";
  case ParamKind::Map:
    return "a map";
  case ParamKind::Expr:
    return "an expression";
  }
  return "an expression";
}

// The variables a macro body creates (assigned, declared, or looped over):
// these are private to each expansion. Variables it only reads are the
// caller's, as in bpftrace.
class LocalVariables : public Visitor<LocalVariables> {
public:
  using Visitor::visit;
  std::set<std::string> names;
  void visit(AssignVar &s) {
    names.insert(s.var->name);
    Visitor::visit(s);
  }
  void visit(VarDecl &s) {
    names.insert(s.var->name);
    Visitor::visit(s);
  }
  void visit(For &s) {
    names.insert(s.var->name);
    Visitor::visit(s);
  }
};

// Marks every node of a fresh copy of a macro's body as expanded at a call.
class MarkExpansion : public Visitor<MarkExpansion> {
public:
  explicit MarkExpansion(const Location *at) : at_(at) {}
  using Visitor::visit;
  void visit(Expr *&e) {
    if (e)
      e->loc.expanded_from = at_;
    Visitor::visit(e);
  }
  void visit(Stmt *&s) {
    if (s)
      s->loc.expanded_from = at_;
    Visitor::visit(s);
  }
  void visit(Block &b) {
    b.loc.expanded_from = at_;
    Visitor::visit(b);
  }
  // Held by statements as Map* / Variable*, not through an Expr*.
  void visit(Map &m) {
    m.loc.expanded_from = at_;
    Visitor::visit(m);
  }
  void visit(Variable &v) { v.loc.expanded_from = at_; }

private:
  const Location *at_;
};

class Expander : public Visitor<Expander> {
public:
  explicit Expander(ASTContext &ctx) : ctx_(ctx) { register_macros(); }
  using Visitor::visit;

  void visit(Expr *&e) {
    if (!e)
      return;
    // A bare parameter of the macro being expanded: the caller's argument,
    // which was expanded at the call site already.
    if (auto *id = dyn_cast<Identifier>(e); id && !frames_.empty()) {
      if (const Expr *arg = frames_.back().expr_arg(id->name)) {
        e = clone(ctx_, arg);
        return;
      }
    }
    Visitor::visit(e);
    if (auto *call = dyn_cast<Call>(e)) {
      // A script's macro shadows a builtin of the same name only where
      // its signature matches the call; otherwise the builtin stays.
      bool builtin = lookup_function(call->name) ||
                     (call->args.empty() && is_builtin_name(call->name));
      if (macros_.count(call->name) &&
          (!builtin || exact(call->name, call->args)))
        e = expand_call(*call);
      else if (call->args.empty() && call->name == "config" &&
               !macros_.count("config"))
        e = config_record(call->loc);
      else if (call->name == "container_of" && !macros_.count(call->name))
        e = container_of(*call);
      else if (call->args.empty() && !lookup_function(call->name) &&
               is_builtin_name(call->name))
        // comm(), cpu(), ...: every builtin variable reads as a call too.
        e = ctx_.make<Identifier>(call->loc, call->name);
      return;
    }
    if (auto *id = dyn_cast<Identifier>(e)) {
      // __builtin_comm is comm, whatever a script's macros call comm.
      constexpr std::string_view kPrefix = "__builtin_";
      if (id->name == "__builtin_config") {
        e = config_record(id->loc);
        return;
      }
      if (std::string_view(id->name).starts_with(kPrefix) &&
          is_builtin_name(id->name.substr(kPrefix.size()))) {
        id->name = id->name.substr(kPrefix.size());
        return;
      }
      if (macros_.count(id->name) && !is_builtin_name(id->name))
        e = expand_ident(*id);
    }
  }

  // A parameter named where a type goes ((t *)p, sizeof(t *), let $v: t)
  // takes the type of a typeof() argument, the written suffixes after its
  // own.
  void visit_spec(TypeSpec &t) {
    if (t.base == TypeSpec::Base::Named && !frames_.empty()) {
      if (auto *arg = dyn_cast<TypeOf>(frames_.back().expr_arg(t.name))) {
        TypeSpec bound = clone_spec(ctx_, arg->spec);
        bound.suffixes.insert(bound.suffixes.end(), t.suffixes.begin(),
                              t.suffixes.end());
        bound.loc = t.loc;
        t = std::move(bound);
        return;
      }
    }
    Visitor::visit_spec(t);
    // typeof(p) of such a parameter: the argument's type again.
    if (auto *arg = dyn_cast<TypeOf>(t.typeof_expr);
        arg && t.base == TypeSpec::Base::Typeof) {
      TypeSpec bound = arg->spec;
      bound.suffixes.insert(bound.suffixes.end(), t.suffixes.begin(),
                            t.suffixes.end());
      bound.loc = t.loc;
      t = std::move(bound);
    }
  }

  // Bare names in sizeof() and offsetof() are types, never macros.
  void visit(Sizeof &s) {
    if (isa<Identifier>(s.expr) && !is_param(s.expr))
      return;
    Visitor::visit(s);
  }
  void visit(Offsetof &o) {
    if (isa<Identifier>(o.expr) && !is_param(o.expr))
      return;
    Visitor::visit(o);
  }
  // Config values and map declarations hold names, not macro calls.
  void visit(ConfigAssign &) {}
  void visit(MapDecl &) {}

  void visit(Variable &v) {
    if (frames_.empty())
      return;
    Frame &f = frames_.back();
    if (auto it = f.vars.find(v.name); it != f.vars.end())
      v.name = it->second;
    else if (f.locals->count(v.name))
      v.name = v.name + "#" + f.macro->name + std::to_string(f.serial);
  }
  void visit(VarDecl &s) {
    if (!frames_.empty() && frames_.back().vars.count(s.var->name)) {
      ctx_.diags().error(s.loc)
          << "Variable declaration shadows macro arg " << s.var->name;
      return;
    }
    Visitor::visit(s);
  }
  void visit(Map &m) {
    Visitor::visit(m);
    if (frames_.empty())
      return;
    Frame &f = frames_.back();
    if (auto it = f.maps.find(m.name); it != f.maps.end()) {
      m.name = it->second;
      return;
    }
    ctx_.diags().error(m.loc) << "Unhygienic access to map: " << m.name
                              << ". Maps must be passed into the macro as "
                                 "arguments.";
  }

private:
  struct Frame {
    const Macro *macro;
    int serial;
    const std::set<std::string> *locals;
    std::map<std::string, std::string> vars;   // $param -> caller's $var
    std::map<std::string, std::string> maps;   // @param -> caller's @map
    std::map<std::string, const Expr *> exprs; // param -> argument
    const Expr *expr_arg(const std::string &name) const {
      auto it = exprs.find(name);
      return it == exprs.end() ? nullptr : it->second;
    }
  };

  ASTContext &ctx_;
  std::map<std::string, std::vector<const Macro *>> macros_;
  std::map<const Macro *, std::set<std::string>> locals_;
  std::vector<Frame> frames_;
  int serial_ = 0;
  static constexpr size_t kMaxNodes = 200000;
  bool too_large_ = false;

  bool is_param(const Expr *e) const {
    auto *id = dyn_cast<Identifier>(e);
    return id && !frames_.empty() && frames_.back().expr_arg(id->name);
  }

  static bool valid_params(ASTContext &ctx, const Macro &m) {
    static const char *what[] = {"Variable", "Map", "Ident"};
    for (size_t i = 0; i < m.params.size(); i++)
      for (size_t j = 0; j < i; j++)
        if (m.params[i].kind == m.params[j].kind &&
            m.params[i].name == m.params[j].name) {
          ctx.diags().error(m.params[i].loc)
              << what[static_cast<int>(m.params[i].kind)]
              << " for macro argument has already been used: "
              << m.params[i].name;
          return false;
        }
    return true;
  }

  void register_macros() {
    for (const Macro *m : ctx_.root->macros) {
      std::vector<ParamKind> kinds;
      for (const auto &p : m->params)
        kinds.push_back(p.kind);
      bool clash = false;
      for (const Macro *other : macros_[m->name])
        clash |= distance(*other, kinds) == 0;
      if (clash) {
        ctx_.diags().error(m->loc) << "Redefinition of macro: " << m->name;
        continue;
      }
      if (!valid_params(ctx_, *m))
        continue;
      macros_[m->name].push_back(m);
      LocalVariables lv;
      lv.visit(*m->body);
      for (const auto &p : m->params)
        lv.names.erase(p.name);
      locals_[m] = std::move(lv.names);
    }
  }

  // config() and __builtin_config: a record of every config variable's
  // value, known here (the config pass and the environment ran before).
  Expr *config_record(const Location &loc) {
    auto *r = ctx_.make<Record>(loc);
    for (const auto &v : runtime::config_vars()) {
      std::string text = v.load(ctx_.config);
      Expr *value = nullptr;
      switch (v.kind) {
      case runtime::ConfigKind::Integer:
        value = ctx_.make<Integer>(loc, std::stoull(text));
        break;
      case runtime::ConfigKind::Boolean:
        value = ctx_.make<Boolean>(loc, text == "true");
        break;
      case runtime::ConfigKind::String:
      case runtime::ConfigKind::Choice:
        value = ctx_.make<String>(loc, text);
        break;
      }
      r->names.emplace_back(v.name);
      r->name_locs.push_back(loc);
      r->elems.push_back(value);
    }
    return r;
  }

  // container_of(ptr, typeof(T), member), bpftrace's standard macro: the
  // T holding *ptr as its member, (T *)((uint8 *)ptr - offsetof(T, member)).
  Expr *container_of(Call &c) {
    auto *type = c.args.size() == 3 ? dyn_cast<TypeOf>(c.args[1]) : nullptr;
    auto *member =
        c.args.size() == 3 ? dyn_cast<Identifier>(c.args[2]) : nullptr;
    if (!type || !member) {
      ctx_.diags().error(c.loc)
          << "container_of(ptr, typeof(T), member) takes a pointer, the "
             "containing type as typeof(), and the member's name";
      return &c;
    }
    TypeSpec bytes;
    bytes.loc = c.loc;
    bytes.base = TypeSpec::Base::Builtin;
    bytes.name = "uint8";
    bytes.suffixes.push_back({true, 0});
    auto *off = ctx_.make<Offsetof>(c.loc);
    off->has_spec = true;
    off->spec = clone_spec(ctx_, type->spec);
    off->fields.push_back(member->name);
    auto *diff = ctx_.make<Binop>(
        c.loc, BinOp::Sub, ctx_.make<Cast>(c.loc, bytes, c.args[0]), off);
    TypeSpec result = clone_spec(ctx_, type->spec);
    result.suffixes.push_back({true, 0});
    return ctx_.make<Cast>(c.loc, result, diff);
  }

  bool exact(const std::string &name, const std::vector<Expr *> &args) {
    std::vector<ParamKind> kinds;
    for (auto *a : args)
      kinds.push_back(arg_kind(a));
    for (const Macro *m : macros_[name])
      if (distance(*m, kinds) == 0)
        return true;
    return false;
  }

  // The definition of `name` that takes exactly these arguments, or null
  // after reporting why none does.
  const Macro *lookup(const std::string &name, const std::vector<Expr *> &args,
                      const Location &loc) {
    std::vector<ParamKind> kinds;
    for (auto *a : args)
      kinds.push_back(arg_kind(a));
    const Macro *closest = nullptr;
    size_t best = SIZE_MAX;
    for (const Macro *m : macros_[name]) {
      size_t d = distance(*m, kinds);
      if (d == 0)
        return m;
      if (d < best) {
        best = d;
        closest = m;
      }
    }
    if (!closest)
      return nullptr;
    auto d = ctx_.diags().error(loc);
    d << "Call to " << name << "() has arguments that do not match any "
      << "definition.";
    if (closest->params.size() != args.size()) {
      d.hint("The closest definition of " + name +
             "() has a different number of arguments. Expected: " +
             std::to_string(closest->params.size()) + " but got " +
             std::to_string(args.size()));
      return nullptr;
    }
    for (size_t i = 0; i < args.size(); i++) {
      const MacroParam &p = closest->params[i];
      if (p.kind == ParamKind::Expr || kinds[i] == p.kind)
        continue;
      ctx_.diags().error(args[i]->loc)
          << "Mismatched arg. " << name << "() expects " << kind_noun(p.kind)
          << " for arg " << p.name << " but got " << kind_noun(kinds[i]) << ".";
    }
    return nullptr;
  }

  bool recursive(const Macro *m, const Location &loc) {
    for (size_t i = 0; i < frames_.size(); i++) {
      if (frames_[i].macro != m)
        continue;
      auto d = ctx_.diags().error(loc);
      d << "Recursive macro call detected. Call chain: ";
      for (size_t j = i; j < frames_.size(); j++)
        d << frames_[j].macro->name << " > ";
      d << m->name;
      return true;
    }
    return false;
  }

  Expr *expand_call(Call &call) {
    const Macro *m = lookup(call.name, call.args, call.loc);
    if (!m || recursive(m, call.loc))
      return &call;
    Frame f{m, ++serial_, &locals_[m], {}, {}, {}};
    for (size_t i = 0; i < m->params.size(); i++) {
      const MacroParam &p = m->params[i];
      Expr *arg = call.args[i];
      switch (p.kind) {
      case ParamKind::Variable:
        f.vars[p.name] = static_cast<Variable *>(arg)->name;
        break;
      case ParamKind::Map:
        f.maps[p.name] = static_cast<Map *>(arg)->name;
        break;
      case ParamKind::Expr:
        // A variable or map passed for an expression is read, never
        // written: wrap it so `x++` in the body cannot change it.
        if (isa<Variable>(arg) || isa<Map>(arg)) {
          auto *b = ctx_.make<Block>(arg->loc);
          b->value = arg;
          arg = ctx_.make<BlockExpr>(arg->loc, b);
        }
        f.exprs[p.name] = arg;
        break;
      }
    }
    return expand(std::move(f), call.loc);
  }

  Expr *expand_ident(Identifier &id) {
    const Macro *m = lookup(id.name, {}, id.loc);
    if (!m || recursive(m, id.loc))
      return &id;
    return expand(Frame{m, ++serial_, &locals_[m], {}, {}, {}}, id.loc);
  }

  Expr *expand(Frame f, const Location &loc) {
    // Each level of a(a(a(...))) with `x + x` in a() doubles the tree: stop
    // before that eats the machine.
    if (ctx_.node_count() > kMaxNodes) {
      if (!too_large_)
        ctx_.diags().error(loc) << "macro expansion is too large (more than "
                                << kMaxNodes << " nodes)";
      too_large_ = true;
      return ctx_.make<Integer>(loc, 0);
    }
    Block *body = clone(ctx_, f.macro->body);
    MarkExpansion(ctx_.keep(loc)).visit(*body);
    body->loc = loc;
    frames_.push_back(std::move(f));
    visit(*body);
    frames_.pop_back();
    // A body that is one literal is that literal, so that printf(m()) and
    // other places that take literals accept it.
    if (body->stmts.empty() && body->value &&
        (isa<String>(body->value) || isa<Integer>(body->value) ||
         isa<Boolean>(body->value)))
      return body->value;
    return ctx_.make<BlockExpr>(loc, body);
  }
};

} // namespace

bool run_macro_expansion(ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  Expander e(ctx);
  e.visit(*ctx.root);
  // Expansion nests macro bodies inside their call sites.
  if (ctx.diags().error_count() == before)
    check_nesting_depth(ctx);
  return ctx.diags().error_count() == before;
}

} // namespace ubtrace::ast
