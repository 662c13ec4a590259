#include "ast/passes/macro_expansion.h"

#include <map>

#include "ast/builtins.h"
#include "ast/visitor.h"

namespace ubtrace::ast {

namespace {

// Renames and substitutes inside one cloned macro body.
class Substituter : public Visitor<Substituter> {
public:
  Substituter(ASTContext &ctx, const Macro &m, const std::vector<Expr *> &args,
              int serial)
      : ctx_(ctx), macro_(m), args_(args), serial_(serial) {}
  using Visitor::visit;

  void visit(Expr *&e) {
    if (auto *id = dyn_cast<Identifier>(e)) {
      if (auto *arg = expr_param(id->name)) {
        e = clone(ctx_, arg);
        return;
      }
    }
    Visitor::visit(e);
  }
  void visit(Variable &v) {
    for (size_t i = 0; i < macro_.params.size(); i++) {
      const auto &p = macro_.params[i];
      if (p.kind == MacroParam::Kind::Variable && p.name == v.name) {
        v.name = static_cast<Variable *>(args_[i])->name;
        return;
      }
    }
    // A variable of the macro's own: private to this expansion.
    v.name = v.name + "__" + macro_.name + "_" + std::to_string(serial_);
  }
  void visit(Map &m) {
    Visitor::visit(m);
    for (size_t i = 0; i < macro_.params.size(); i++) {
      const auto &p = macro_.params[i];
      if (p.kind == MacroParam::Kind::Map && p.name == m.name) {
        m.name = static_cast<Map *>(args_[i])->name;
        return;
      }
    }
    ctx_.diags().error(m.loc)
        << "macro '" << macro_.name << "' uses map " << m.name
        << " that is not one of its parameters";
  }

private:
  ASTContext &ctx_;
  const Macro &macro_;
  const std::vector<Expr *> &args_;
  int serial_;

  Expr *expr_param(const std::string &name) {
    for (size_t i = 0; i < macro_.params.size(); i++)
      if (macro_.params[i].kind == MacroParam::Kind::Expr &&
          macro_.params[i].name == name)
        return args_[i];
    return nullptr;
  }
};

class Expander : public Visitor<Expander> {
public:
  explicit Expander(ASTContext &ctx) : ctx_(ctx) {
    for (auto *m : ctx.root->macros) {
      auto &list = macros_[m->name];
      for (auto *other : list)
        if (other->params.size() == m->params.size())
          ctx.diags().error(m->loc)
              << "macro '" << m->name << "' with " << m->params.size()
              << " parameter(s) is already defined";
      list.push_back(m);
      for (size_t i = 0; i < m->params.size(); i++)
        for (size_t j = 0; j < i; j++)
          if (m->params[i].name == m->params[j].name)
            ctx.diags().error(m->params[i].loc)
                << "duplicate macro parameter " << m->params[i].name;
    }
  }
  using Visitor::visit;

  void visit(Expr *&e) {
    Visitor::visit(e);
    if (auto *call = dyn_cast<Call>(e)) {
      if (auto it = macros_.find(call->name); it != macros_.end())
        e = expand(*call, it->second, call->args, call->loc);
      return;
    }
    if (auto *id = dyn_cast<Identifier>(e)) {
      auto it = macros_.find(id->name);
      if (it == macros_.end() || is_builtin_name(id->name))
        return;
      for (auto *m : it->second)
        if (m->params.empty()) {
          std::vector<Expr *> none;
          e = expand_one(*m, none, id->loc);
          return;
        }
    }
  }

private:
  ASTContext &ctx_;
  std::map<std::string, std::vector<Macro *>> macros_;
  std::vector<std::string> stack_;
  int serial_ = 0;

  Expr *expand(Call &call, const std::vector<Macro *> &overloads,
               std::vector<Expr *> &args, const Location &loc) {
    for (auto *m : overloads)
      if (m->params.size() == args.size())
        return expand_one(*m, args, loc);
    auto d = ctx_.diags().error(loc);
    d << "macro '" << call.name << "' takes ";
    for (size_t i = 0; i < overloads.size(); i++)
      d << (i ? " or " : "") << overloads[i]->params.size();
    d << " argument(s) (" << args.size() << " provided)";
    return &call;
  }

  Expr *expand_one(const Macro &m, std::vector<Expr *> &args,
                   const Location &loc) {
    for (const auto &name : stack_) {
      if (name == m.name) {
        auto d = ctx_.diags().error(loc);
        d << "recursive macro expansion: ";
        for (const auto &s : stack_)
          d << s << " -> ";
        d << m.name;
        return ctx_.make<Integer>(loc, 0);
      }
    }
    bool ok = true;
    for (size_t i = 0; i < m.params.size(); i++) {
      const auto &p = m.params[i];
      if (p.kind == MacroParam::Kind::Variable && !isa<Variable>(args[i])) {
        ctx_.diags().error(args[i]->loc)
            << "macro '" << m.name << "' expects a variable for parameter "
            << p.name;
        ok = false;
      }
      if (p.kind == MacroParam::Kind::Map) {
        auto *map = dyn_cast<Map>(args[i]);
        if (!map || map->subscripted) {
          ctx_.diags().error(args[i]->loc)
              << "macro '" << m.name << "' expects a map for parameter "
              << p.name;
          ok = false;
        }
      }
    }
    if (!ok)
      return ctx_.make<Integer>(loc, 0);
    Block *body = clone(ctx_, m.body);
    Substituter sub(ctx_, m, args, ++serial_);
    sub.visit(*body);
    Expr *result = ctx_.make<BlockExpr>(loc, body);
    stack_.push_back(m.name);
    visit(result);
    stack_.pop_back();
    return result;
  }
};

} // namespace

bool run_macro_expansion(ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  Expander e(ctx);
  e.visit(*ctx.root);
  return ctx.diags().error_count() == before;
}

} // namespace ubtrace::ast
