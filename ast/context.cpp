#include "ast/context.h"

#include <cassert>

namespace ubtrace::ast {

ASTContext::ASTContext(std::string filename, std::string text) {
  files_.push_back(
      std::make_unique<SourceFile>(std::move(filename), std::move(text)));
}

const SourceFile *ASTContext::add_source(std::string filename,
                                         std::string text) {
  files_.push_back(
      std::make_unique<SourceFile>(std::move(filename), std::move(text)));
  return files_.back().get();
}

TypeSpec clone_spec(ASTContext &ctx, const TypeSpec &s) {
  TypeSpec out = s;
  if (s.typeof_expr)
    out.typeof_expr = clone(ctx, s.typeof_expr);
  return out;
}

Expr *clone(ASTContext &ctx, const Expr *e) {
  if (!e)
    return nullptr;
  Expr *out = nullptr;
  switch (e->kind) {
  case NodeKind::Integer:
    out = ctx.make<Integer>(*static_cast<const Integer *>(e));
    break;
  case NodeKind::Boolean:
    out = ctx.make<Boolean>(*static_cast<const Boolean *>(e));
    break;
  case NodeKind::String:
    out = ctx.make<String>(*static_cast<const String *>(e));
    break;
  case NodeKind::PositionalParam:
    out = ctx.make<PositionalParam>(*static_cast<const PositionalParam *>(e));
    break;
  case NodeKind::PositionalCount:
    out = ctx.make<PositionalCount>(*static_cast<const PositionalCount *>(e));
    break;
  case NodeKind::Identifier:
    out = ctx.make<Identifier>(*static_cast<const Identifier *>(e));
    break;
  case NodeKind::Variable:
    out = ctx.make<Variable>(*static_cast<const Variable *>(e));
    break;
  case NodeKind::Map: {
    auto *m = ctx.make<Map>(*static_cast<const Map *>(e));
    for (auto &k : m->keys)
      k = clone(ctx, k);
    out = m;
    break;
  }
  case NodeKind::Call: {
    auto *c = ctx.make<Call>(*static_cast<const Call *>(e));
    for (auto &a : c->args)
      a = clone(ctx, a);
    out = c;
    break;
  }
  case NodeKind::Binop: {
    auto *b = ctx.make<Binop>(*static_cast<const Binop *>(e));
    b->left = clone(ctx, b->left);
    b->right = clone(ctx, b->right);
    out = b;
    break;
  }
  case NodeKind::Unop: {
    auto *u = ctx.make<Unop>(*static_cast<const Unop *>(e));
    u->expr = clone(ctx, u->expr);
    out = u;
    break;
  }
  case NodeKind::Ternary: {
    auto *t = ctx.make<Ternary>(*static_cast<const Ternary *>(e));
    t->cond = clone(ctx, t->cond);
    t->left = clone(ctx, t->left);
    t->right = clone(ctx, t->right);
    out = t;
    break;
  }
  case NodeKind::FieldAccess: {
    auto *f = ctx.make<FieldAccess>(*static_cast<const FieldAccess *>(e));
    f->expr = clone(ctx, f->expr);
    out = f;
    break;
  }
  case NodeKind::ArrayAccess: {
    auto *a = ctx.make<ArrayAccess>(*static_cast<const ArrayAccess *>(e));
    a->expr = clone(ctx, a->expr);
    a->index = clone(ctx, a->index);
    out = a;
    break;
  }
  case NodeKind::Cast: {
    auto *c = ctx.make<Cast>(*static_cast<const Cast *>(e));
    c->spec = clone_spec(ctx, c->spec);
    c->expr = clone(ctx, c->expr);
    out = c;
    break;
  }
  case NodeKind::Tuple: {
    auto *t = ctx.make<Tuple>(*static_cast<const Tuple *>(e));
    for (auto &x : t->elems)
      x = clone(ctx, x);
    out = t;
    break;
  }
  case NodeKind::Record: {
    auto *r = ctx.make<Record>(*static_cast<const Record *>(e));
    for (auto &x : r->elems)
      x = clone(ctx, x);
    out = r;
    break;
  }
  case NodeKind::BlockExpr: {
    auto *b = ctx.make<BlockExpr>(*static_cast<const BlockExpr *>(e));
    b->block = clone(ctx, b->block);
    out = b;
    break;
  }
  case NodeKind::Sizeof: {
    auto *s = ctx.make<Sizeof>(*static_cast<const Sizeof *>(e));
    s->spec = clone_spec(ctx, s->spec);
    s->expr = clone(ctx, s->expr);
    out = s;
    break;
  }
  case NodeKind::Offsetof: {
    auto *o = ctx.make<Offsetof>(*static_cast<const Offsetof *>(e));
    o->spec = clone_spec(ctx, o->spec);
    o->expr = clone(ctx, o->expr);
    out = o;
    break;
  }
  case NodeKind::TypeOf: {
    auto *t = ctx.make<TypeOf>(*static_cast<const TypeOf *>(e));
    t->spec = clone_spec(ctx, t->spec);
    out = t;
    break;
  }
  default:
    assert(false && "not an expression");
  }
  return out;
}

Block *clone(ASTContext &ctx, const Block *b) {
  if (!b)
    return nullptr;
  auto *out = ctx.make<Block>(b->loc);
  for (auto *s : b->stmts)
    out->stmts.push_back(clone(ctx, s));
  out->value = clone(ctx, b->value);
  return out;
}

Stmt *clone(ASTContext &ctx, const Stmt *s) {
  switch (s->kind) {
  case NodeKind::ExprStmt: {
    auto *x = ctx.make<ExprStmt>(*static_cast<const ExprStmt *>(s));
    x->expr = clone(ctx, x->expr);
    return x;
  }
  case NodeKind::AssignVar: {
    auto *x = ctx.make<AssignVar>(*static_cast<const AssignVar *>(s));
    x->var = static_cast<Variable *>(clone(ctx, x->var));
    x->value = clone(ctx, x->value);
    return x;
  }
  case NodeKind::AssignMap: {
    auto *x = ctx.make<AssignMap>(*static_cast<const AssignMap *>(s));
    x->map = static_cast<Map *>(clone(ctx, x->map));
    x->value = clone(ctx, x->value);
    return x;
  }
  case NodeKind::VarDecl: {
    auto *x = ctx.make<VarDecl>(*static_cast<const VarDecl *>(s));
    x->var = static_cast<Variable *>(clone(ctx, x->var));
    x->spec = clone_spec(ctx, x->spec);
    x->init = clone(ctx, x->init);
    return x;
  }
  case NodeKind::If: {
    auto *x = ctx.make<If>(*static_cast<const If *>(s));
    x->cond = clone(ctx, x->cond);
    x->then_block = clone(ctx, x->then_block);
    x->else_block = clone(ctx, x->else_block);
    return x;
  }
  case NodeKind::Unroll: {
    auto *x = ctx.make<Unroll>(*static_cast<const Unroll *>(s));
    x->count = clone(ctx, x->count);
    x->body = clone(ctx, x->body);
    return x;
  }
  case NodeKind::While: {
    auto *x = ctx.make<While>(*static_cast<const While *>(s));
    x->cond = clone(ctx, x->cond);
    x->body = clone(ctx, x->body);
    return x;
  }
  case NodeKind::For: {
    auto *x = ctx.make<For>(*static_cast<const For *>(s));
    x->var = static_cast<Variable *>(clone(ctx, x->var));
    x->map = x->map ? static_cast<Map *>(clone(ctx, x->map)) : nullptr;
    x->start = clone(ctx, x->start);
    x->end = clone(ctx, x->end);
    x->body = clone(ctx, x->body);
    return x;
  }
  case NodeKind::Jump: {
    auto *x = ctx.make<Jump>(*static_cast<const Jump *>(s));
    x->value = clone(ctx, x->value);
    return x;
  }
  case NodeKind::Block:
    return clone(ctx, static_cast<const Block *>(s));
  default:
    assert(false && "not a statement");
    return nullptr;
  }
}

} // namespace ubtrace::ast
