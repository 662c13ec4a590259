// Semantic analysis of statements, probes, functions and map declarations.
#include "ast/builtins.h"
#include "ast/passes/attach_points.h"
#include "ast/passes/config.h"
#include "ast/passes/semantic_internal.h"

#include <cstdlib>

namespace ubtrace::ast {

namespace {
bool is_condition(const Type &t) {
  return t.is_intlike() || t.kind == TypeKind::Pointer;
}
} // namespace

void Semantic::visit(Expr *&e) {
  // #define NAME VALUE: NAME reads as the literal VALUE.
  if (auto *id = dyn_cast<Identifier>(e)) {
    auto it = ctx_.c_types.defines.find(id->name);
    if (it != ctx_.c_types.defines.end()) {
      const std::string &v = it->second;
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
        e = ctx_.make<String>(id->loc, v.substr(1, v.size() - 2));
      } else {
        char *end = nullptr;
        long long n = std::strtoll(v.c_str(), &end, 0);
        if (end && *end == '\0' && !v.empty())
          e = ctx_.make<Integer>(id->loc, static_cast<uint64_t>(n < 0 ? -n : n),
                                 n < 0);
      }
    }
  }
  Visitor::visit(e);
}

void Semantic::visit(ExprStmt &s) {
  visit(s.expr);
  if (auto *c = dyn_cast<Call>(s.expr); c && c->type.is_aggregation())
    err(c->loc) << c->name << "() should be directly assigned to a map";
}

void Semantic::visit(AssignVar &s) {
  visit(s.value);
  // Integers keep their width, as in bpftrace ($x = 1 is an int8), joined
  // over the variable's assignments (assign_var).
  assign_var(*s.var, decay(s.value->type), s.loc, false);
}

void Semantic::visit(AssignMap &s) {
  check_map_keys(*s.map);
  auto *call = dyn_cast<Call>(s.value);
  in_map_assign_ = call != nullptr;
  visit(s.value);
  in_map_assign_ = false;
  Type t = s.value->type;
  if (!t.is_aggregation())
    t = decay(t);
  // A non-negative literal stays sign-flexible when widened, so it takes
  // the map's unsigned type (@v[1] = (uint64)-1; @v[2] = 5; stays uint64).
  if (t.is_int())
    t = widen_int(t);
  // @x = @y where @y is count(): the value is a plain integer.
  update_map_value(*s.map, t, s.map->loc);
}

void Semantic::visit(VarDecl &s) {
  if (scopes_.back().count(s.var->name)) {
    err(s.loc) << "Variable " << s.var->shown()
               << " was already declared in this scope";
    return;
  }
  if (find_var(s.var->name)) {
    err(s.loc) << "Variable " << s.var->shown()
               << " is already declared in an outer scope";
    return;
  }
  Type declared;
  if (s.has_spec) {
    declared = resolve_spec(s.spec);
    if (declared.is_none())
      return;
    if (declared.kind == TypeKind::Void) {
      err(s.loc) << "Invalid variable declaration type: void";
      return;
    }
  }
  Type init;
  if (s.init) {
    visit(s.init);
    init = decay(s.init->type);
  }
  if (s.has_spec && s.init && !init.is_none()) {
    int64_t lit;
    bool literal = literal_int(s.init, lit);
    bool ok =
        !common_type(declared, init).is_none() ||
        (declared.kind == TypeKind::String && init.kind == TypeKind::String);
    if (ok && literal && declared.is_int()) {
      // A literal must fit the declared integer.
      bool fits =
          declared.is_signed
              ? (declared.size >= 8 ||
                 (lit >= -(int64_t(1) << (8 * declared.size - 1)) &&
                  lit < (int64_t(1) << (8 * declared.size - 1))))
              : (lit >= 0 && (declared.size >= 8 ||
                              lit < (int64_t(1) << (8 * declared.size))));
      if (!fits) {
        err(s.init->loc) << "Type mismatch for " << s.var->shown()
                         << ": the literal " << lit << " does not fit in "
                         << type_str(declared);
        ok = false; // reported; declared all the same, so no more errors
      }
    } else if (!ok) {
      err(s.loc) << "Type mismatch for " << s.var->shown()
                 << ": trying to assign value of type '" << type_str(init)
                 << "' when variable is declared as '" << type_str(declared)
                 << "'";
    }
  }
  VarInfo info;
  info.origin = &s;
  info.type = s.has_spec ? declared : joined_var_type(&s, init);
  if (!s.has_spec && !s.init)
    info.type = joined_var_type(&s, Type{});
  info.loc = s.loc;
  info.declared = true;
  info.annotated = s.has_spec;
  scopes_.back()[s.var->name] = info;
  s.var->type = info.type;
}

void Semantic::visit(If &s) {
  visit(s.cond);
  Type c = decay(s.cond->type);
  if (!c.is_none() && !is_condition(c))
    err(s.cond->loc) << "Invalid condition in if(): " << type_str(c);
  push_scope();
  visit(*s.then_block);
  pop_scope();
  if (s.else_block) {
    push_scope();
    visit(*s.else_block);
    pop_scope();
  }
}

void Semantic::visit(Unroll &s) {
  visit(s.count);
  int64_t n = 0;
  if (!literal_int(s.count, n)) {
    err(s.loc) << "unroll() takes an integer literal";
    return;
  }
  if (n > 100) {
    err(s.loc) << "unroll maximum value is 100";
    return;
  }
  if (n < 1) {
    err(s.loc) << "unroll minimum value is 1";
    return;
  }
  s.times = n;
  push_scope();
  visit(*s.body);
  pop_scope();
}

void Semantic::visit(While &s) {
  visit(s.cond);
  Type c = decay(s.cond->type);
  if (!c.is_none() && !is_condition(c))
    err(s.cond->loc) << "Invalid condition in while(): " << type_str(c);
  loop_depth_++;
  push_scope();
  visit(*s.body);
  pop_scope();
  loop_depth_--;
}

void Semantic::visit(For &s) {
  Type var_type;
  if (s.map) {
    if (s.map->subscripted) {
      err(s.map->loc) << "for loops iterate over a whole map: use "
                      << s.map->name;
      return;
    }
    MapInfo &info = whole_map(*s.map);
    if (info.scalar) {
      err(s.map->loc) << "for loops need a keyed map; " << s.map->name
                      << " has no keys";
      return;
    }
    Type value = info.value;
    if (value.kind == TypeKind::Hist || value.kind == TypeKind::LHist ||
        value.kind == TypeKind::TSeries || value.kind == TypeKind::Stats) {
      err(s.map->loc) << "for loops can not iterate over a map of "
                      << type_str(value);
      return;
    }
    if (!info.key.is_none() && !value.is_none())
      var_type = make_tuple({info.key, decay(value)});
  } else {
    visit(s.start);
    visit(s.end);
    for (Expr *e : {s.start, s.end}) {
      Type t = decay(e->type);
      if (!t.is_none() && !t.is_intlike())
        err(e->loc) << "for loop ranges take integers, not " << type_str(t);
    }
    // The bounds' common type, as in bpftrace (0..3 counts in an int8).
    Type lo = decay(s.start->type), hi = decay(s.end->type);
    var_type = lo.is_int() && hi.is_int() ? common_type(lo, hi) : Type{};
    if (var_type.is_none())
      var_type = make_int(8, true);
  }
  loop_depth_++;
  push_scope();
  scopes_.back()[s.var->name] = VarInfo{var_type, s.var->loc, true, false};
  s.var->type = var_type;
  visit(*s.body);
  pop_scope();
  loop_depth_--;
}

void Semantic::visit(Jump &s) {
  switch (s.jump) {
  case JumpKind::Break:
  case JumpKind::Continue:
    if (loop_depth_ == 0)
      err(s.loc) << (s.jump == JumpKind::Break ? "break" : "continue")
                 << " used outside of a loop";
    return;
  case JumpKind::Return:
    visit(s.value);
    if (func_) {
      Type want = resolve_spec(func_->ret);
      if (want.kind == TypeKind::Void && s.value)
        err(s.loc) << "Function " << func_->name
                   << " returns void, but a value is returned";
      else if (want.kind != TypeKind::Void && !s.value)
        err(s.loc) << "Function " << func_->name
                   << " must return a value of type " << type_str(want);
      else if (s.value && !s.value->type.is_none() && !want.is_none() &&
               common_type(want, decay(s.value->type)).is_none())
        err(s.loc) << "Function " << func_->name << " returns "
                   << type_str(want) << ", not " << type_str(s.value->type);
      return;
    }
    // In a probe, `return x;` ends it as `return;` does; x is evaluated
    // (bpftrace accepts it too).
    return;
  }
}

// Whether control never passes a statement: a return, break or continue,
// exit(), a block ending in one, an if/else whose branches both end so.
static bool ends_flow(const Stmt *s) {
  if (!s)
    return false;
  if (isa<Jump>(s))
    return true;
  if (auto *e = dyn_cast<ExprStmt>(s)) {
    auto *c = dyn_cast<Call>(e->expr);
    return c && c->name == "exit";
  }
  if (auto *b = dyn_cast<Block>(s))
    return !b->stmts.empty() && ends_flow(b->stmts.back());
  if (auto *i = dyn_cast<If>(s))
    return i->else_block && ends_flow(i->then_block) &&
           ends_flow(i->else_block);
  return false;
}

void Semantic::visit(Block &b) {
  // A nested block is a scope of its own: { let $a = 1; } print($a); is an
  // error, as in bpftrace.
  bool warned = false;
  for (size_t i = 0; i < b.stmts.size(); i++) {
    Stmt *&s = b.stmts[i];
    if (!warned && i > 0 && ends_flow(b.stmts[i - 1])) {
      warn(s->loc) << "Unreachable statement.";
      warned = true;
    }
    if (!isa<Block>(s)) {
      visit(s);
      continue;
    }
    push_scope();
    visit(s);
    pop_scope();
  }
  if (b.value && !warned && !b.stmts.empty() && ends_flow(b.stmts.back()))
    warn(b.value->loc) << "Unreachable statement.";
  if (b.value)
    visit(b.value);
}

void Semantic::visit(Probe &p) {
  probe_ = &p;
  probe_set_ = 0;
  for (auto *ap : p.attach_points)
    probe_set_ |= probe_set_of(*ap->kind);
  if ((probe_set_ & PS_GPU_ANY) && (probe_set_ & ~PS_GPU_ANY))
    err(p.loc)
        << "a probe can not mix GPU (kernel, kernelret) and host attach points";
  scopes_.clear();
  push_scope();
  loop_depth_ = 0;
  if (p.pred) {
    visit(p.pred);
    Type c = decay(p.pred->type);
    if (!c.is_none() && !is_condition(c))
      err(p.pred->loc) << "Invalid type for predicate: " << type_str(c);
  }
  visit(*p.body);
  pop_scope();
  probe_ = nullptr;
  probe_set_ = 0;
}

void Semantic::visit(Subprog &f) {
  func_ = &f;
  scopes_.clear();
  push_scope();
  probe_set_ = PS_CLI | PS_USER;
  for (auto &param : f.params) {
    Type t = resolve_spec(param.spec);
    scopes_.back()[param.var->name] = VarInfo{t, param.var->loc, true, true};
    param.var->type = t;
  }
  resolve_spec(f.ret);
  visit(*f.body);
  pop_scope();
  func_ = nullptr;
  probe_set_ = 0;
}

void Semantic::visit(MapDecl &d) {
  auto *call = dyn_cast<Call>(d.init);
  if (!call) {
    err(d.init->loc)
        << "map declarations take a map type and its size, e.g. let " << d.name
        << " = hash(100);";
    return;
  }
  static const char *kinds[] = {"hash", "lruhash", "percpuhash",
                                "percpulruhash"};
  bool known = false;
  for (const char *k : kinds)
    known |= call->name == k;
  if (!known) {
    auto d = err(call->loc);
    d << "Invalid bpf map type: " << call->name;
    d.hint("Valid map types: hash, lruhash, percpuhash, percpulruhash");
    return;
  }
  int64_t n = 0;
  if (call->args.size() != 1 || !literal_int(call->args[0], n) || n <= 0) {
    err(call->loc) << call->name
                   << "() takes the maximum number of entries, a "
                      "positive integer literal";
    return;
  }
  if (!check_literal_range(*call, 0, 1, kMaxMapEntries,
                           "number of map entries"))
    return;
  d.map_kind = call->name;
  d.max_entries = static_cast<uint64_t>(n);
  for (auto *other : ctx_.root->map_decls) {
    if (other == &d)
      break;
    if (other->name == d.name) {
      err(d.loc) << "map " << d.name << " is declared more than once";
      break;
    }
  }
  MapInfo &info = map_info(d.name, d.loc);
  info.decl_kind = d.map_kind;
  info.max_entries = d.max_entries;
}

} // namespace ubtrace::ast
