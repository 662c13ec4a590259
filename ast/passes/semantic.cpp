#include "ast/passes/semantic.h"

#include "ast/builtins.h"
#include "ast/passes/attach_points.h"
#include "ast/passes/c_definitions.h"
#include "ast/passes/config.h"
#include "ast/passes/semantic_internal.h"
#include "ast/syscall_structs.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace ubtrace::ast {

Semantic::Semantic(ASTContext &ctx) : ctx_(ctx) {
  max_strlen_ = ctx.config.max_strlen;
  // The mode of stacks that do not name one (ustack, kstack, ustack(8)):
  // ValueType::stack_mode's numbering.
  switch (ctx.config.stack_mode) {
  case runtime::StackMode::Bpftrace:
    stack_mode_ = 0;
    break;
  case runtime::StackMode::Perf:
    stack_mode_ = 1;
    break;
  case runtime::StackMode::Raw:
    stack_mode_ = 2;
    break;
  case runtime::StackMode::BuildId:
    stack_mode_ = 3;
    break;
  }
}

namespace {

// A for loop's variable is its own: `for ($kv : @a) {...} for ($kv : @b)
// {...}` are two variables, which may have different types. Code
// generation keys a probe's variables by name, so a loop variable whose
// name another loop (or code outside the loop) also uses is renamed, in
// the loop and its body, to name#N.
class LoopVariables : public Visitor<LoopVariables> {
public:
  using Visitor::visit;
  void rename(Block &body) {
    counting_ = true;
    visit(body);
    counting_ = false;
    visit(body);
  }
  void visit(For &f) {
    if (f.map)
      visit(*f.map);
    visit(f.start);
    visit(f.end);
    const std::string name = f.var->name;
    if (counting_) {
      loops_[name]++;
      inner_.push_back(name);
      visit(*f.body);
      inner_.pop_back();
      return;
    }
    bool shared = loops_[name] > 1 || outside_.count(name);
    if (shared)
      f.var->name = name + "#" + std::to_string(++serial_);
    renames_.push_back({name, shared ? f.var->name : name});
    visit(*f.body);
    renames_.pop_back();
  }
  void visit(Variable &v) {
    if (counting_) {
      if (std::find(inner_.begin(), inner_.end(), v.name) == inner_.end())
        outside_.insert(v.name);
      return;
    }
    for (auto it = renames_.rbegin(); it != renames_.rend(); ++it)
      if (it->first == v.name) {
        v.name = it->second;
        return;
      }
  }

private:
  bool counting_ = false;
  std::map<std::string, int> loops_;
  std::set<std::string> outside_;
  std::vector<std::string> inner_;
  std::vector<std::pair<std::string, std::string>> renames_;
  int serial_ = 0;
};

// `@m = { ...; count() };`: the aggregation is the block's value. It runs
// with its map assignment, so the statement becomes the block itself
// ending in `@m = count();` (the block keeps its scope).
class AggregationBlocks : public Visitor<AggregationBlocks> {
public:
  explicit AggregationBlocks(ASTContext &ctx) : ctx_(ctx) {}
  using Visitor::visit;
  void visit(Block &b) {
    for (auto &s : b.stmts) {
      auto *a = dyn_cast<AssignMap>(s);
      auto *be = a && !a->compound ? dyn_cast<BlockExpr>(a->value) : nullptr;
      auto *call = be ? dyn_cast<Call>(be->block->value) : nullptr;
      if (call) {
        auto fn = lookup_function(call->name);
        if (fn && (builtin_fn_info(*fn).flags & BF_AGGREGATION)) {
          Block *inner = be->block;
          inner->value = nullptr;
          inner->stmts.push_back(ctx_.make<AssignMap>(a->loc, a->map, call));
          s = inner;
        }
      }
    }
    Visitor::visit(b);
  }

private:
  ASTContext &ctx_;
};

} // namespace

bool Semantic::run() {
  size_t before = ctx_.diags().error_count();
  for (auto *probe : ctx_.root->probes)
    if (probe->body) {
      AggregationBlocks(ctx_).visit(*probe->body);
      LoopVariables().rename(*probe->body);
    }
  // Learn map types until nothing changes, then check for real.
  for (int pass = 0; pass < 16; pass++) {
    changed_ = false;
    sink_ = Diagnostics();
    visit(*ctx_.root);
    if (!changed_)
      break;
  }
  final_ = true;
  visit(*ctx_.root);

  for (const auto &[name, info] : ctx_.maps)
    if (info.assigned && info.value.is_none() && ctx_.diags().ok())
      ctx_.diags().error(info.first_use)
          << "Could not resolve the type of " << name
          << ": assign it a value of a known type somewhere";
  for (const auto &name : read_maps_) {
    auto it = ctx_.maps.find(name);
    if (it == ctx_.maps.end() || !it->second.assigned)
      ctx_.diags().error(it != ctx_.maps.end() ? it->second.first_use
                                               : Location{})
          << "Undefined map: " << name;
  }
  std::set<std::string> declared;
  for (auto *d : ctx_.root->map_decls) {
    // Invalid and repeated declarations have had their error.
    if (d->map_kind.empty() || !declared.insert(d->name).second)
      continue;
    auto it = ctx_.maps.find(d->name);
    if (it == ctx_.maps.end() ||
        (!it->second.assigned && !read_maps_.count(d->name))) {
      ctx_.diags().warning(d->loc) << "Unused map: " << d->name;
      continue;
    }
    // Aggregations keep a value per CPU (per thread here): they need a
    // per-cpu map type, and other values a plain one.
    const MapInfo &info = it->second;
    if (info.value.is_none())
      continue;
    bool percpu = d->map_kind == "percpuhash" || d->map_kind == "percpulruhash";
    if (percpu != info.value.is_aggregation())
      ctx_.diags().error(d->loc)
          << "Incompatible map types. Type from declaration: " << d->map_kind
          << ". Type from value/key type: "
          << (info.value.is_aggregation() ? "percpuhash" : "hash");
  }
  return ctx_.diags().error_count() == before;
}

DiagBuilder Semantic::err(const Location &loc) {
  return (final_ ? ctx_.diags() : sink_).error(loc);
}

DiagBuilder Semantic::warn(const Location &loc) {
  return (final_ ? ctx_.diags() : sink_).warning(loc);
}

Type Semantic::decay(const Type &t) {
  switch (t.kind) {
  case TypeKind::Count:
    return make_int(8, false);
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
    return make_int(8, t.agg_signed);
  default:
    return t;
  }
}

bool Semantic::literal_int(const Expr *e, int64_t &out) const {
  if (auto *i = dyn_cast<Integer>(e)) {
    out = i->as_signed();
    return true;
  }
  if (auto *c = dyn_cast<Cast>(e))
    return literal_int(c->expr, out);
  // A numeric positional parameter is known when compiling (unroll($1)).
  if (auto *p = dyn_cast<PositionalParam>(e)) {
    if (p->as_string || p->n < 1 ||
        p->n > static_cast<int>(ctx_.positional.size()))
      return false;
    const std::string &v = ctx_.positional[p->n - 1];
    if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) ||
                       (v[0] == '-' && v.size() > 1)))
      return false;
    char *end = nullptr;
    errno = 0;
    long long n = std::strtoll(v.c_str(), &end, 0);
    if (*end || errno)
      return false;
    out = n;
    return true;
  }
  if (auto *u = dyn_cast<Unop>(e); u && u->op == UnOp::Neg) {
    if (!literal_int(u->expr, out))
      return false;
    out = -out;
    return true;
  }
  if (auto *s = dyn_cast<Sizeof>(e)) {
    out = static_cast<int64_t>(s->value);
    return s->value != 0;
  }
  // Constant arithmetic, wrapping as 64-bit two's complement (no UB).
  if (auto *b = dyn_cast<Binop>(e)) {
    int64_t l = 0, r = 0;
    if (!literal_int(b->left, l) || !literal_int(b->right, r))
      return false;
    uint64_t ul = static_cast<uint64_t>(l), ur = static_cast<uint64_t>(r);
    uint64_t v = 0;
    switch (b->op) {
    case BinOp::Add:
      v = ul + ur;
      break;
    case BinOp::Sub:
      v = ul - ur;
      break;
    case BinOp::Mul:
      v = ul * ur;
      break;
    case BinOp::Div:
    case BinOp::Mod:
      if (r == 0 || (l == INT64_MIN && r == -1))
        return false;
      v = static_cast<uint64_t>(b->op == BinOp::Div ? l / r : l % r);
      break;
    case BinOp::BitAnd:
      v = ul & ur;
      break;
    case BinOp::BitOr:
      v = ul | ur;
      break;
    case BinOp::BitXor:
      v = ul ^ ur;
      break;
    case BinOp::Shl:
      v = ul << (ur & 63);
      break;
    default:
      return false;
    }
    out = static_cast<int64_t>(v);
    return true;
  }
  return false;
}

std::string Semantic::probe_kinds() const {
  if (!probe_)
    return "fn";
  std::string out;
  for (auto *ap : probe_->attach_points) {
    std::string name(ap->provider());
    if (out.find("'" + name + "'") != std::string::npos)
      continue;
    out += (out.empty() ? "'" : ", '") + name + "'";
  }
  return out;
}

bool Semantic::gpu_probe() const {
  return (probe_set_ & PS_GPU_ANY) != 0;
}

Type Semantic::resolve_spec(TypeSpec &spec, bool allow_unsized_array) {
  Type t;
  const CTypes &c = ctx_.c_types;
  // string[N], buffer[N] and inet[N] take their size from the first suffix.
  size_t first_suffix = 0;
  switch (spec.base) {
  case TypeSpec::Base::Builtin: {
    const std::string &n = spec.name;
    if (n == "string" || n == "buffer" || n == "inet") {
      uint32_t size = n == "string" ? max_strlen_ : n == "buffer" ? 64 : 16;
      if (!spec.suffixes.empty() && !spec.suffixes[0].pointer) {
        size = static_cast<uint32_t>(spec.suffixes[0].count);
        first_suffix = 1;
        if (size == 0) {
          err(spec.loc) << n << " types need a size, e.g. " << n << "[16]";
          return Type{};
        }
      }
      t = n == "string" ? make_string(size)
          : n == "buffer"
              ? make_buffer(size)
              : make_simple(TypeKind::Inet, 24); // u64 family, 16 bytes
    } else {
      t = c_base_type(n);
      if (t.is_none()) {
        err(spec.loc) << "Unknown type: " << n;
        return Type{};
      }
    }
    break;
  }
  case TypeSpec::Base::Struct:
  case TypeSpec::Base::Union: {
    std::string full =
        (spec.base == TypeSpec::Base::Struct ? "struct " : "union ") +
        spec.name;
    auto it = c.records.find(full);
    // The traced binaries' DWARF, then the kernel's structures system
    // calls point to (syscall_structs.h).
    if (it == c.records.end() &&
        (import_debug_type(full) || import_syscall_struct(full, ctx_.c_types)))
      it = c.records.find(full);
    if (it == c.records.end()) {
      // A pointer to an unknown record is fine until a field is read.
      t = make_simple(TypeKind::CStruct, 0);
      t.name = full;
      if (spec.suffixes.empty() || !spec.suffixes[0].pointer) {
        err(spec.loc) << "Unknown "
                      << (spec.base == TypeSpec::Base::Struct ? "struct"
                                                              : "union")
                      << ": " << full;
        return Type{};
      }
    } else {
      t = it->second;
    }
    break;
  }
  case TypeSpec::Base::Enum: {
    auto it = c.enums.find(spec.name);
    if (it == c.enums.end() && import_debug_type("enum " + spec.name))
      it = c.enums.find(spec.name);
    if (it == c.enums.end()) {
      err(spec.loc) << "Unknown enum: " << spec.name;
      return Type{};
    }
    t = make_int(4, false);
    t.name = spec.name;
    for (const auto &[v, n] : it->second)
      if (v < 0)
        t.is_signed = true;
    break;
  }
  case TypeSpec::Base::Named: {
    if (auto it = c.typedefs.find(spec.name); it != c.typedefs.end()) {
      t = it->second;
      break;
    }
    t = c_base_type(spec.name);
    if (t.is_none() && import_debug_type(spec.name))
      if (auto it = c.typedefs.find(spec.name); it != c.typedefs.end())
        t = it->second;
    if (t.is_none()) {
      err(spec.loc) << "Unknown type: " << spec.name;
      return Type{};
    }
    break;
  }
  case TypeSpec::Base::Typeof:
    visit(spec.typeof_expr);
    t = spec.typeof_expr ? decay(spec.typeof_expr->type) : Type{};
    if (t.is_none())
      return t;
    break;
  }
  for (size_t i = first_suffix; i < spec.suffixes.size(); i++) {
    const auto &s = spec.suffixes[i];
    if (s.pointer) {
      t = make_pointer(t);
      continue;
    }
    if (s.count == 0 && !allow_unsized_array) {
      err(spec.loc) << "array types need a size here";
      return Type{};
    }
    t = make_array(t, static_cast<uint32_t>(s.count));
  }
  return t;
}

VarInfo *Semantic::find_var(const std::string &name) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto f = it->find(name); f != it->end())
      return &f->second;
  return nullptr;
}

void Semantic::assign_var(Variable &v, const Type &t, const Location &loc,
                          bool is_decl) {
  if (t.kind == TypeKind::Void) {
    err(loc) << "Value of type void cannot be assigned to " << v.shown();
    return;
  }
  if (t.is_aggregation()) {
    err(loc) << "Value of type '" << type_str(t) << "' cannot be assigned to "
             << v.shown() << ": aggregations only live in maps";
    return;
  }
  VarInfo *info = find_var(v.name);
  if (!info) {
    Type joined = joined_var_type(&v, t);
    scopes_.back()[v.name] = VarInfo{joined, loc, is_decl, false, &v};
    v.type = joined;
    return;
  }
  if (info->type.is_none()) {
    info->type = joined_var_type(info->origin, t);
    v.type = info->type;
    return;
  }
  if (t.is_none()) {
    v.type = info->type;
    return;
  }
  Type c = common_type(info->type, t);
  if (c.is_none() || (info->annotated && !same_type(c, info->type) &&
                      !(info->type.is_int() && t.is_int()))) {
    err(loc) << "Type mismatch for " << v.shown()
             << ": trying to assign value of type '" << type_str(t)
             << "' when variable already contains a value of type '"
             << type_str(info->type) << "'";
    return;
  }
  if (!info->annotated)
    join_var(*info, c);
  v.type = info->type;
}

Type Semantic::joined_var_type(const void *origin, const Type &t) const {
  auto it = joined_vars_.find(origin);
  if (it == joined_vars_.end() || t.is_none())
    return t;
  Type c = common_type(it->second, t);
  return c.is_none() ? t : c;
}

void Semantic::join_var(VarInfo &info, const Type &t) {
  auto same = [&t](const Type &u) {
    return type_str(u) == type_str(t) && u.sign_flexible == t.sign_flexible;
  };
  // Only a type that widened needs another pass to reach earlier uses.
  bool widened = !same(info.type);
  info.type = t;
  if (!widened || !info.origin || !t.is_int())
    return;
  auto [it, fresh] = joined_vars_.try_emplace(info.origin, t);
  if (!fresh && same(it->second))
    return;
  it->second = t;
  changed_ = true;
}

MapInfo &Semantic::map_info(const std::string &name, const Location &loc) {
  auto [it, inserted] = ctx_.maps.try_emplace(name);
  if (inserted) {
    it->second.name = name;
    it->second.first_use = loc;
  }
  return it->second;
}

void Semantic::check_map_keys(Map &m) {
  for (auto &k : m.keys)
    visit(k);
  MapInfo &info = map_info(m.name, m.loc);
  // @m[(a, b)] is @m[a, b].
  std::vector<Expr *> keys = m.keys;
  if (keys.size() == 1)
    if (auto *t = dyn_cast<Tuple>(keys[0]))
      keys = t->elems;

  // The first use decides whether a map is scalar or keyed; later uses of
  // the other shape are the errors.
  auto [shape, fresh] = map_keyed_.try_emplace(m.name, m.subscripted);
  if (shape->second != m.subscripted) {
    if (m.subscripted)
      err(m.loc) << m.name
                 << " used as a map with an explicit key (non-scalar map), "
                    "previously used without an explicit key (scalar map)";
    else
      err(m.loc) << m.name
                 << " used as a map without an explicit key (scalar map), "
                    "previously used with an explicit key (non-scalar map)";
    return;
  }
  Type key;
  if (!m.subscripted) {
    info.scalar = true;
  } else {
    info.keyed = true;
    std::vector<Type> types;
    for (auto *k : keys) {
      Type kt = decay(k->type);
      if (kt.is_none())
        return;
      switch (kt.kind) {
      case TypeKind::Void:
      case TypeKind::Hist:
      case TypeKind::LHist:
      case TypeKind::TSeries:
      case TypeKind::Stats:
      case TypeKind::StackMode:
      case TypeKind::TimestampMode:
        err(k->loc) << type_str(kt) << " cannot be part of a map key";
        return;
      default:
        break;
      }
      // Integer keys keep their width (@m[1] is keyed by an int8), joined
      // over the map's uses below, as in bpftrace.
      types.push_back(kt);
    }
    key = types.size() == 1 ? types[0] : make_tuple(types);
  }
  if (!m.subscripted) {
    m.key_type = Type{};
    return;
  }
  if (info.key.is_none()) {
    info.key = key;
    changed_ = true;
  } else {
    Type c = common_type(info.key, key);
    if (c.is_none()) {
      // Quoted as one type, a tuple for several keys: '(int64,string[3])'.
      err(m.loc) << "Argument mismatch for " << m.name
                 << ": trying to access with arguments: '" << type_str(key)
                 << "' when map expects arguments: '" << type_str(info.key)
                 << "'";
      return;
    }
    // Strings of other sizes are the same type but not the same layout
    // (a tuple's padding may even hide it in its size): compare names.
    if (type_str(c) != type_str(info.key)) {
      info.key = c;
      changed_ = true;
    }
  }
  m.key_type = info.key;
}

MapInfo &Semantic::whole_map(Map &m) {
  MapInfo &info = map_info(m.name, m.loc);
  read_maps_.insert(m.name);
  m.key_type = info.key;
  m.type = info.value;
  return info;
}

bool Semantic::import_debug_type(const std::string &name) {
  if (!ctx_.debug_types)
    return false;
  std::vector<const AttachPoint *> from;
  for (const auto *probe : ctx_.root->probes)
    for (const auto *ap : probe->attach_points)
      if (ap->kind == ProbeKind::Uprobe || ap->kind == ProbeKind::Uretprobe)
        from.push_back(ap);
  return !from.empty() &&
         ctx_.debug_types->import_type(name, from, ctx_.c_types);
}

Type Semantic::complete(const Type &t) const {
  if (t.kind != TypeKind::CStruct || !t.fields.empty())
    return t;
  auto it = ctx_.c_types.records.find(t.name);
  return it == ctx_.c_types.records.end() ? t : it->second;
}

void Semantic::update_map_value(Map &m, const Type &t, const Location &loc) {
  MapInfo &info = map_info(m.name, m.loc);
  info.assigned = true;
  if (t.is_none())
    return;
  if (t.kind == TypeKind::Void) {
    err(loc) << "Value of type void cannot be assigned to " << m.name;
    return;
  }
  auto mismatch = [&] {
    err(loc) << "Type mismatch for " << m.name
             << ": trying to assign value of type '" << type_str(t)
             << "' when map already contains a value of type '"
             << type_str(info.value) << "'";
  };
  if (info.value.is_none()) {
    info.value = t;
    changed_ = true;
  } else if (t.is_aggregation() || info.value.is_aggregation()) {
    if (t.kind != info.value.kind) {
      mismatch();
      return;
    }
    if (!same_type(t, info.value)) {
      if (t.kind == TypeKind::Hist || t.kind == TypeKind::LHist ||
          t.kind == TypeKind::TSeries) {
        err(loc) << m.name << " already holds a " << type_str(info.value)
                 << " with other parameters";
        return;
      }
      // sum/min/max/avg/stats of signed and unsigned: signed wins.
      if (info.value.agg_signed != t.agg_signed && !info.value.agg_signed) {
        info.value.agg_signed = true;
        changed_ = true;
      }
    }
  } else {
    Type c = common_type(info.value, t);
    if (c.is_none()) {
      mismatch();
      return;
    }
    if (type_str(c) != type_str(info.value)) {
      info.value = c;
      changed_ = true;
    }
  }
  m.type = info.value;
}

bool run_semantic_analysis(ASTContext &ctx) {
  Semantic s(ctx);
  return s.run();
}

} // namespace ubtrace::ast
