// A CRTP visitor over the tree. Derived passes override the visit() overloads
// for the nodes they care about (with `using Visitor::visit;`) and call the
// base version to keep walking. Children held as Expr*& / Stmt*& can be
// replaced by assigning through the reference.
#pragma once

#include "ast/ast.h"

namespace ubtrace::ast {

template <class Derived> class Visitor {
public:
  Derived &self() { return static_cast<Derived &>(*this); }

  // ---- dispatch ----
  void visit(Expr *&e) {
    if (!e)
      return;
    switch (e->kind) {
#define UBT_EXPR(K)                                                            \
  case NodeKind::K:                                                            \
    self().visit(static_cast<K &>(*e));                                        \
    break;
      UBT_EXPR(Integer)
      UBT_EXPR(Boolean)
      UBT_EXPR(String)
      UBT_EXPR(PositionalParam)
      UBT_EXPR(PositionalCount)
      UBT_EXPR(Identifier)
      UBT_EXPR(Variable)
      UBT_EXPR(Map)
      UBT_EXPR(Call)
      UBT_EXPR(Binop)
      UBT_EXPR(Unop)
      UBT_EXPR(Ternary)
      UBT_EXPR(FieldAccess)
      UBT_EXPR(ArrayAccess)
      UBT_EXPR(Cast)
      UBT_EXPR(Tuple)
      UBT_EXPR(Record)
      UBT_EXPR(BlockExpr)
      UBT_EXPR(Sizeof)
      UBT_EXPR(Offsetof)
      UBT_EXPR(TypeOf)
#undef UBT_EXPR
    default:
      break;
    }
  }

  void visit(Stmt *&s) {
    if (!s)
      return;
    switch (s->kind) {
#define UBT_STMT(K)                                                            \
  case NodeKind::K:                                                            \
    self().visit(static_cast<K &>(*s));                                        \
    break;
      UBT_STMT(ExprStmt)
      UBT_STMT(AssignVar)
      UBT_STMT(AssignMap)
      UBT_STMT(VarDecl)
      UBT_STMT(If)
      UBT_STMT(Unroll)
      UBT_STMT(While)
      UBT_STMT(For)
      UBT_STMT(Jump)
      UBT_STMT(Block)
#undef UBT_STMT
    default:
      break;
    }
  }

  // ---- expressions ----
  void visit(Integer &) {}
  void visit(Boolean &) {}
  void visit(String &) {}
  void visit(PositionalParam &) {}
  void visit(PositionalCount &) {}
  void visit(Identifier &) {}
  void visit(Variable &) {}
  void visit(Map &m) {
    for (auto &k : m.keys)
      self().visit(k);
  }
  void visit(Call &c) {
    for (auto &a : c.args)
      self().visit(a);
  }
  void visit(Binop &b) {
    self().visit(b.left);
    self().visit(b.right);
  }
  void visit(Unop &u) { self().visit(u.expr); }
  void visit(Ternary &t) {
    self().visit(t.cond);
    self().visit(t.left);
    self().visit(t.right);
  }
  void visit(FieldAccess &f) { self().visit(f.expr); }
  void visit(ArrayAccess &a) {
    self().visit(a.expr);
    self().visit(a.index);
  }
  void visit(Cast &c) {
    self().visit_spec(c.spec);
    self().visit(c.expr);
  }
  void visit(Tuple &t) {
    for (auto &e : t.elems)
      self().visit(e);
  }
  void visit(Record &r) {
    for (auto &e : r.elems)
      self().visit(e);
  }
  void visit(BlockExpr &b) { self().visit(*b.block); }
  void visit(Sizeof &s) {
    self().visit_spec(s.spec);
    self().visit(s.expr);
  }
  void visit(Offsetof &o) {
    self().visit_spec(o.spec);
    self().visit(o.expr);
  }
  void visit(TypeOf &t) { self().visit_spec(t.spec); }
  void visit_spec(TypeSpec &t) {
    if (t.typeof_expr)
      self().visit(t.typeof_expr);
  }

  // ---- statements ----
  void visit(ExprStmt &s) { self().visit(s.expr); }
  void visit(AssignVar &s) {
    self().visit(s.value);
    self().visit(*s.var);
  }
  void visit(AssignMap &s) {
    self().visit(s.value);
    self().visit(*s.map);
  }
  void visit(VarDecl &s) {
    if (s.has_spec)
      self().visit_spec(s.spec);
    self().visit(s.init);
    self().visit(*s.var);
  }
  void visit(If &s) {
    self().visit(s.cond);
    self().visit(*s.then_block);
    if (s.else_block)
      self().visit(*s.else_block);
  }
  void visit(Unroll &s) {
    self().visit(s.count);
    self().visit(*s.body);
  }
  void visit(While &s) {
    self().visit(s.cond);
    self().visit(*s.body);
  }
  void visit(For &s) {
    if (s.map)
      self().visit(*s.map);
    self().visit(s.start);
    self().visit(s.end);
    self().visit(*s.var);
    self().visit(*s.body);
  }
  void visit(Jump &s) { self().visit(s.value); }
  void visit(Block &b) {
    for (auto &s : b.stmts)
      self().visit(s);
    self().visit(b.value);
  }

  // ---- top level ----
  void visit(AttachPoint &) {}
  void visit(Probe &p) {
    for (auto *ap : p.attach_points)
      self().visit(*ap);
    self().visit(p.pred);
    self().visit(*p.body);
  }
  void visit(ConfigAssign &c) { self().visit(c.value); }
  void visit(MapDecl &m) { self().visit(m.init); }
  void visit(Macro &m) { self().visit(*m.body); }
  void visit(Subprog &s) {
    for (auto &p : s.params)
      self().visit(*p.var);
    self().visit(*s.body);
  }
  void visit(Import &) {}
  void visit(CDefinition &) {}
  void visit(Program &p) {
    for (auto *c : p.c_definitions)
      self().visit(*c);
    for (auto *c : p.config)
      self().visit(*c);
    for (auto *i : p.imports)
      self().visit(*i);
    for (auto *m : p.map_decls)
      self().visit(*m);
    for (auto *f : p.functions)
      self().visit(*f);
    for (auto *pr : p.probes)
      self().visit(*pr);
  }
};

} // namespace ubtrace::ast
