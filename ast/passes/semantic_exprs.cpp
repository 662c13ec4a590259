// Semantic analysis of expressions other than calls.
#include "ast/builtins.h"
#include "ast/passes/semantic_internal.h"
#include "ast/suggest.h"
#include "ast/syscall_structs.h"
#include "ast/syscalls.h"

#include <cctype>
#include <climits>
#include <cstdlib>

namespace ubtrace::ast {

namespace {

bool is_numeric(const std::string &s) {
  if (s.empty())
    return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size())
    return false;
  if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    for (size_t j = i + 2; j < s.size(); j++)
      if (!std::isxdigit(static_cast<unsigned char>(s[j])))
        return false;
    return true;
  }
  for (size_t j = i; j < s.size(); j++)
    if (!std::isdigit(static_cast<unsigned char>(s[j])))
      return false;
  return true;
}

// Integer-like values usable in conditions and arithmetic.
bool is_scalar(const Type &t) {
  return t.is_intlike() || t.kind == TypeKind::Pointer;
}

Type gpu_dim3() {
  return make_record({"x", "y", "z"}, {make_int(4, false), make_int(4, false),
                                       make_int(4, false)});
}

} // namespace

void Semantic::visit(Integer &e) {
  if (e.negative && e.value > static_cast<uint64_t>(INT64_MAX) + 1) {
    err(e.loc) << "integer literal is too small: -" << e.value;
    e.type = make_int(8, true);
    return;
  }
  e.type = literal_type(e.value, e.negative);
}

void Semantic::visit(Boolean &e) {
  e.type = make_bool();
}

void Semantic::visit(String &e) {
  e.type = make_string(static_cast<uint32_t>(e.value.size() + 1));
}

void Semantic::visit(PositionalParam &e) {
  if (e.n < 1) {
    err(e.loc) << "positional parameters start at $1";
    e.type = make_int(8, true);
    return;
  }
  bool given = e.n <= static_cast<int>(ctx_.positional.size());
  const std::string value = given ? ctx_.positional[e.n - 1] : "";
  if (e.as_string || (given && !is_numeric(value)))
    e.type = make_string(static_cast<uint32_t>(value.size() + 1));
  else if (given && value[0] != '-' &&
           std::strtoull(value.c_str(), nullptr, 0) > INT64_MAX)
    e.type = make_int(8, false); // 0xffffffffffffffff
  else {
    e.type = make_int(8, true);
    // A number given as it is reads as a literal: it takes the sign of
    // what it meets (@v[1] = (uint64)-1; @v[2] = $1; stays uint64).
    e.type.sign_flexible = given && value[0] != '-';
  }
}

void Semantic::visit(PositionalCount &e) {
  e.type = make_int(8, true);
}

// probetype: the provider of the probe's attach points ("special" for
// begin and end, as bpftrace names them). One text per probe: attach
// points of different types in one probe would need one each.
std::string Semantic::probetype_text(const Identifier &e) {
  std::string text;
  if (!probe_)
    return text;
  for (const auto *ap : probe_->attach_points) {
    if (!ap->kind)
      continue;
    std::string t(ap->provider());
    if (*ap->kind == ProbeKind::Begin || *ap->kind == ProbeKind::End)
      t = "special";
    if (!text.empty() && t != text) {
      err(e.loc) << "probetype in a probe whose attach points are of "
                 << "different types (" << text << ", " << t
                 << "): split the probe";
      return text;
    }
    text = t;
  }
  return text;
}

// The type of each builtin variable of ast/builtins.def.
Type Semantic::builtin_var_type(Identifier &e) {
  switch (e.var) {
  case BuiltinVar::Pid:
  case BuiltinVar::Tid:
  case BuiltinVar::Cpu:
  case BuiltinVar::Cpid:
  case BuiltinVar::Ppid:
  case BuiltinVar::Numaid:
  case BuiltinVar::Rand:
  case BuiltinVar::Smid:
  case BuiltinVar::Warpid:
  case BuiltinVar::Laneid:
    return make_int(4, false);
  case BuiltinVar::Comm:
  case BuiltinVar::Pcomm:
  case BuiltinVar::LeaderComm:
    return make_string(16);
  case BuiltinVar::Uid:
  case BuiltinVar::Gid:
  case BuiltinVar::Nsecs:
  case BuiltinVar::Elapsed:
  case BuiltinVar::Cgroup:
  case BuiltinVar::Jiffies:
  case BuiltinVar::Ncpus:
  case BuiltinVar::Curtask:
  case BuiltinVar::Ctx:
    return make_int(8, false);
  case BuiltinVar::Retval:
    narrow_retval(e);
    return make_int(8, true);
  case BuiltinVar::Arg:
  case BuiltinVar::Sarg:
    return make_int(8, true);
  case BuiltinVar::Usermode:
    return make_int(1, false);
  case BuiltinVar::Kstack:
  case BuiltinVar::Ustack: {
    bool user = e.var == BuiltinVar::Ustack;
    Type t = make_simple(user ? TypeKind::UStack : TypeKind::KStack, 0);
    t.stack_limit = 127;
    t.stack_mode = stack_mode_;
    t.size = 8 * (127 + (user ? 2 : 1)); // nr, frames[, pid]
    return t;
  }
  case BuiltinVar::Func:
    // GPU probes too: a usym of the kernel (its id), which the CLI
    // prints as the kernel's name; 16 bytes per key instead of a name
    // built on every GPU thread, and one type with uprobes' func.
    return make_simple(TypeKind::USym, 16);
  case BuiltinVar::Probe:
    return make_simple(TypeKind::ProbeName, 8);
  case BuiltinVar::Probetype:
    e.const_text = probetype_text(e);
    return make_string(static_cast<uint32_t>(e.const_text.size() + 1));
  case BuiltinVar::BuiltinArch:
#if defined(__x86_64__)
    e.const_text = "x86_64";
#elif defined(__aarch64__)
    e.const_text = "aarch64";
#else
    e.const_text = "unknown";
#endif
    return make_string(static_cast<uint32_t>(e.const_text.size() + 1));
  case BuiltinVar::Username:
    return make_simple(TypeKind::Username, 8);
  case BuiltinVar::ThreadIdx:
  case BuiltinVar::BlockIdx:
  case BuiltinVar::BlockDim:
  case BuiltinVar::GridDim:
    return gpu_dim3();
  case BuiltinVar::Args:
    return args_type(e);
  }
  return Type{};
}

// The uprobe attach points of the probe being checked.
std::vector<const AttachPoint *> Semantic::uprobe_points() const {
  std::vector<const AttachPoint *> out;
  if (probe_)
    for (const auto *ap : probe_->attach_points)
      if (ap->kind == ProbeKind::Uprobe || ap->kind == ProbeKind::Uretprobe)
        out.push_back(ap);
  return out;
}

namespace {

// A uretprobe's args come from the registers its hook kept at the entry
// (the six argument registers); arguments passed on the stack belong to
// the function, which may reuse their memory before it returns, and other
// registers are not kept: left out, with the reason.
void keep_entry_readable(FunctionArgs &fa) {
  std::vector<std::string> names;
  std::vector<Type> elems;
  std::vector<ArgPlace> places;
  for (size_t i = 0; i < fa.record.fields.size() && i < fa.places.size(); i++) {
    const Field &f = fa.record.fields[i];
    const ArgPlace &at = fa.places[i];
    if (at.kind != ArgPlace::Kind::Constant && (at.slot < 0 || at.slot >= 6)) {
      fa.unreadable[f.name] =
          at.kind == ArgPlace::Kind::Slot
              ? "it is passed on the stack, where the function may have "
                "written over it by the time it returns (a uretprobe's args "
                "are the registers kept at its entry)"
              : "it is in a register other than the argument registers a "
                "uretprobe keeps from the entry";
      continue;
    }
    names.push_back(f.name);
    elems.push_back(*f.type);
    places.push_back(at);
  }
  if (places.size() == fa.places.size())
    return;
  fa.record = make_record(std::move(names), std::move(elems));
  fa.places = std::move(places);
}

} // namespace

// A system call tracepoint's args: the fields of its events' formats, each
// read from the slot of the ctx the agent fills for the event it runs at
// (ast::syscall_args_layout); raw_syscalls' args[6] from the registers.
Type Semantic::syscall_args_type(Identifier &e) {
  auto layout =
      syscall_args_layout(probe_syscall_events(probe_->attach_points));
  if (!layout.error.empty()) {
    err(e.loc) << layout.error;
    return Type{};
  }
  // A pointer to a structure the kernel declares (`args.rqtp` of
  // nanosleep) points to it, when every event declares the field alike
  // and the layout is known (syscall_structs.h); else it stays void *.
  auto events = probe_syscall_events(probe_->attach_points);
  for (auto &f : layout.record.fields) {
    std::string_view decl;
    bool alike = true;
    for (const auto &ev : events)
      for (const auto &a :
           ev.call && !ev.exit ? ev.call->args : std::vector<SyscallArg>{})
        if (a.name == f.name) {
          alike = alike && (decl.empty() || decl == a.decl);
          decl = a.decl;
        }
    if (!alike || decl.empty())
      continue;
    if (Type t = syscall_struct_pointer(decl, ctx_.c_types); !t.is_none())
      f.type = std::make_shared<const Type>(t);
  }
  std::vector<ArgPlace> places;
  for (size_t j = 0; j < layout.record.fields.size(); j++) {
    ArgPlace p;
    p.kind = layout.sources.front()[j] == kSyscallAllArgs
                 ? ArgPlace::Kind::SyscallArgs
                 : ArgPlace::Kind::Syscall;
    p.slot = static_cast<int>(j);
    places.push_back(p);
  }
  e.arg_places = std::move(places);
  return layout.record;
}

Type Semantic::args_type(Identifier &e) {
  if (probe_ && !probe_->attach_points.empty() &&
      probe_->attach_points.front()->kind == ProbeKind::Tracepoint)
    return syscall_args_type(e);
  auto points = uprobe_points();
  if (points.empty() || points.size() != probe_->attach_points.size()) {
    err(e.loc) << "args is read from the traced function's DWARF in uprobe "
                  "probes; use arg0..argN here";
    return Type{};
  }
  if (!ctx_.debug_types) {
    err(e.loc) << "args needs the traced function's DWARF argument types, "
                  "which cannot be read here; use arg0..argN";
    return Type{};
  }
  std::optional<FunctionArgs> first;
  const bool at_return = points.front()->kind == ProbeKind::Uretprobe;
  for (const auto *ap : points) {
    if ((ap->kind == ProbeKind::Uretprobe) != at_return) {
      err(e.loc) << "args: a uretprobe reads the arguments its function was "
                    "entered with, a uprobe the registers now; split the "
                    "probe";
      return Type{};
    }
    std::string error;
    auto fa = ctx_.debug_types->function_args(*ap, ctx_.c_types, error);
    if (!fa) {
      err(e.loc) << error;
      return Type{};
    }
    if (!first) {
      first = std::move(fa);
      continue;
    }
    if (!same_type(first->record, fa->record) || first->places != fa->places) {
      err(e.loc) << "args: the functions of this probe's attach points "
                    "differ in their arguments ("
                 << type_str(first->record) << " and " << ap->name() << "'s "
                 << type_str(fa->record) << "); split the probe";
      return Type{};
    }
  }
  if (at_return)
    keep_entry_readable(*first);
  e.arg_places = first->places;
  args_unreadable_ = first->unreadable;
  return first->record;
}

// retval in a uretprobe stays int64, as in bpftrace (scripts key maps by
// retval and by arg0 alike: malloc's result, free's argument), but when
// the function's DWARF says it returns a narrower integer (every attach
// point agreeing) only those bits count: an int's -3 reads -3, not
// 4294967293.
void Semantic::narrow_retval(Identifier &e) {
  e.retval_size = 0;
  auto points = uprobe_points();
  if (!ctx_.debug_types || points.empty() ||
      points.size() != probe_->attach_points.size())
    return;
  Type out;
  for (const auto *ap : points) {
    std::string error;
    auto fa = ctx_.debug_types->function_args(*ap, ctx_.c_types, error);
    if (!fa || !fa->ret.is_int() || fa->ret.size >= 8 ||
        (!out.is_none() &&
         (out.size != fa->ret.size || out.is_signed != fa->ret.is_signed)))
      return;
    out = fa->ret;
  }
  e.retval_size = static_cast<uint8_t>(out.size);
  e.retval_signed = out.is_signed;
}

void Semantic::visit(Identifier &e) {
  const CTypes &c = ctx_.c_types;
  if (auto b = lookup_builtin(e.name)) {
    e.ident_kind = IdentKind::Builtin;
    e.var = b->var;
    e.var_index = b->index;
    if (probe_ && !in_probe_set(builtin_var_info(e.var).probes)) {
      err(e.loc) << "The " << e.name << " builtin can not be used in "
                 << probe_kinds() << " probes";
    }
    e.type = builtin_var_type(e);
    return;
  }
  if (auto it = c.enum_values.find(e.name); it != c.enum_values.end()) {
    e.ident_kind = IdentKind::EnumValue;
    e.enum_value = it->second.second;
    e.type = make_int(8, true);
    e.type.name = it->second.first; // prints as its name (%s, print, maps)
    return;
  }
  if (e.name == "bpftrace" || e.name == "perf" || e.name == "raw" ||
      e.name == "build_id") {
    e.ident_kind = IdentKind::StackMode;
    e.type = make_simple(TypeKind::StackMode);
    return;
  }
  if (e.name == "monotonic" || e.name == "boot" || e.name == "tai" ||
      e.name == "sw_tai" || e.name == "curr_ns" || e.name == "init") {
    e.ident_kind = IdentKind::TimestampMode;
    e.type = make_simple(TypeKind::TimestampMode);
    return;
  }
  auto d = err(e.loc);
  d << "Unknown identifier: '" << e.name << "'";
  std::vector<std::string> names = builtin_names();
  for (const auto &[n, v] : c.enum_values)
    names.push_back(n);
  std::string hint = did_you_mean(e.name, names);
  if (!hint.empty())
    d.hint(hint);
  e.type = Type{};
}

void Semantic::visit(Variable &e) {
  VarInfo *v = find_var(e.name);
  if (!v) {
    auto d = err(e.loc);
    d << "Undefined or undeclared variable: " << e.shown();
    std::vector<std::string> names;
    for (const auto &scope : scopes_)
      for (const auto &[n, info] : scope)
        if (n.find('#') == std::string::npos) // not a renamed one
          names.push_back(n);
    std::string hint = did_you_mean(e.shown(), names);
    if (!hint.empty())
      d.hint(hint);
    e.type = Type{};
    return;
  }
  e.type = v->type;
}

void Semantic::visit(Map &e) {
  check_map_keys(e);
  read_maps_.insert(e.name);
  MapInfo &info = map_info(e.name, e.loc);
  e.type = info.value;
}

// Operands of types that do not mix are a mismatch; of one type that the
// operator does not take, a misuse (bpftrace's two messages).
void Semantic::bad_operands(Binop &e, const Type &l, const Type &r) {
  const char *op = binop_str(e.op);
  if (common_type(l, r).is_none())
    err(e.loc) << "Type mismatch for '" << op << "': comparing " << type_str(l)
               << " with " << type_str(r);
  else
    err(e.loc) << "The " << op
               << " operator can not be used on expressions of types "
               << type_str(l) << ", " << type_str(r);
}

void Semantic::visit(Binop &e) {
  visit(e.left);
  visit(e.right);
  Type l = decay(e.left->type), r = decay(e.right->type);
  e.type = Type{};
  // A map not typed yet (@sum = @sum + $x) takes the other side's integer
  // type, so its type can be learnt from its own assignment.
  if (l.is_none() && isa<Map>(e.left) && r.is_intlike())
    l = r;
  if (r.is_none() && isa<Map>(e.right) && l.is_intlike())
    r = l;
  if (l.is_none() || r.is_none())
    return;
  const char *op = binop_str(e.op);

  if (binop_is_logical(e.op)) {
    if (!is_scalar(l) || !is_scalar(r)) {
      bad_operands(e, l, r);
      return;
    }
    e.type = make_bool();
    return;
  }

  if (binop_is_comparison(e.op)) {
    bool eq = e.op == BinOp::Eq || e.op == BinOp::Ne;
    if (eq &&
        (l.kind == TypeKind::ProbeName) != (r.kind == TypeKind::ProbeName) &&
        (l.kind == TypeKind::String || r.kind == TypeKind::String)) {
      probe_as_text(l.kind == TypeKind::ProbeName ? e.left : e.right);
      l = decay(e.left->type);
      r = decay(e.right->type);
    }
    if (is_scalar(l) && is_scalar(r)) {
      e.type = make_bool();
      return;
    }
    if (eq && !common_type(l, r).is_none() &&
        (l.kind == TypeKind::String || l.kind == TypeKind::Tuple ||
         l.kind == TypeKind::Record || l.kind == TypeKind::Array ||
         l.kind == TypeKind::Buffer || l.kind == TypeKind::Inet ||
         l.kind == TypeKind::USym || l.kind == TypeKind::KSym)) {
      e.type = make_bool();
      return;
    }
    bad_operands(e, l, r);
    return;
  }

  // A string positional parameter in pointer arithmetic is a pointer to
  // its text, as in bpftrace: str($1 + 1) skips its first character.
  if ((e.op == BinOp::Add || e.op == BinOp::Sub)) {
    auto text_pointer = [&](Expr *&side, Type &t, const Type &other) {
      if (isa<PositionalParam>(side) && t.kind == TypeKind::String &&
          other.is_intlike()) {
        auto *addr = ctx_.make<Unop>(side->loc, UnOp::AddrOf, side);
        addr->type = make_pointer(make_int(1, true));
        side = addr;
        t = addr->type;
      }
    };
    text_pointer(e.left, l, r);
    if (e.op == BinOp::Add)
      text_pointer(e.right, r, l);
  }

  // Arithmetic.
  int64_t divisor;
  if ((e.op == BinOp::Div || e.op == BinOp::Mod) &&
      literal_int(e.right, divisor) && divisor == 0) {
    err(e.loc) << "Division by zero";
  }
  bool lp = l.kind == TypeKind::Pointer, rp = r.kind == TypeKind::Pointer;
  if (lp || rp) {
    if (lp && rp && e.op == BinOp::Sub) {
      e.type = make_int(8, true);
      return;
    }
    if ((e.op == BinOp::Add && (lp != rp) &&
         (l.is_intlike() || r.is_intlike())) ||
        (e.op == BinOp::Sub && lp && r.is_intlike())) {
      e.type = lp ? l : r;
      return;
    }
    if (e.op == BinOp::BitAnd || e.op == BinOp::BitOr || e.op == BinOp::Shr ||
        e.op == BinOp::Shl || e.op == BinOp::Mod || e.op == BinOp::Div ||
        e.op == BinOp::Mul || e.op == BinOp::BitXor) {
      // Pointer bit twiddling reads the address as an integer.
      if ((lp || l.is_intlike()) && (rp || r.is_intlike())) {
        e.type = make_int(8, false);
        return;
      }
    }
    err(e.loc) << "The " << op
               << " operator can not be used on expressions of types "
               << type_str(l) << ", " << type_str(r);
    return;
  }
  if (!l.is_intlike() || !r.is_intlike()) {
    bad_operands(e, l, r);
    return;
  }
  if (l.kind == TypeKind::Boolean)
    l = make_int(1, false);
  if (r.kind == TypeKind::Boolean)
    r = make_int(1, false);
  // A literal takes the other side's type when it fits.
  int64_t lit;
  Type t;
  if (literal_int(e.right, lit) && !literal_int(e.left, lit))
    t = make_int(std::max<uint32_t>(l.size, 8), l.is_signed || lit < 0);
  else if (literal_int(e.left, lit) && !literal_int(e.right, lit))
    t = make_int(std::max<uint32_t>(r.size, 8), r.is_signed || lit < 0);
  else
    t = common_type(l, r);
  if (t.is_none())
    t = make_int(8, true);
  t.name.clear();
  if (e.op == BinOp::Sub)
    t.is_signed = true;
  // Arithmetic is done in 64 bits, as in bpftrace.
  e.type = make_int(8, t.is_signed);
}

void Semantic::visit(Unop &e) {
  visit(e.expr);
  bool incdec = e.op == UnOp::PreInc || e.op == UnOp::PreDec ||
                e.op == UnOp::PostInc || e.op == UnOp::PostDec;
  if (auto *m = dyn_cast<Map>(e.expr); m && incdec) {
    // @x++ on a map nobody assigned yet starts it at 0: it defines the map.
    Type current = map_info(m->name, m->loc).value;
    update_map_value(*m, current.is_none() ? make_int(8, true) : decay(current),
                     e.loc);
  }
  bool dec = e.op == UnOp::PreDec || e.op == UnOp::PostDec;
  if (auto *v = dyn_cast<Variable>(e.expr); v && incdec) {
    // $x++ counts in 64 bits: $x = 127; $x++ makes $x an int64 (128).
    VarInfo *info = find_var(v->name);
    if (info && info->type.is_int() && !info->annotated)
      join_var(*info, common_type(info->type,
                                  make_int(8, info->type.is_signed || dec)));
  }
  Type t = decay(e.expr->type);
  e.type = Type{};
  if (t.is_none())
    return;
  switch (e.op) {
  case UnOp::Neg:
    if (!t.is_intlike()) {
      err(e.loc) << "The - operator can not be used on expressions of type '"
                 << type_str(t) << "'";
      return;
    }
    e.type = make_int(8, true);
    return;
  case UnOp::LogNot:
    if (!is_scalar(t)) {
      err(e.loc) << "The ! operator can not be used on expressions of type '"
                 << type_str(t) << "'";
      return;
    }
    e.type = make_bool();
    return;
  case UnOp::BitNot:
    if (!t.is_intlike()) {
      err(e.loc) << "The ~ operator can not be used on expressions of type '"
                 << type_str(t) << "'";
      return;
    }
    e.type = t.is_int() ? t : make_int(1, false);
    e.type.name.clear();
    return;
  case UnOp::Deref:
    // An integer is an address: *arg0 reads 8 bytes there, as in bpftrace.
    if (t.is_int()) {
      e.type = make_int(8, false);
      return;
    }
    if (t.kind != TypeKind::Pointer) {
      err(e.loc) << "Can not dereference type '" << type_str(t)
                 << "': only pointers can be dereferenced";
      return;
    }
    if (t.elem->kind == TypeKind::Void) {
      err(e.loc) << "Can not dereference a void pointer: cast it first";
      return;
    }
    e.type = complete(*t.elem);
    return;
  case UnOp::AddrOf:
    // A string positional parameter's text (pointer arithmetic on it).
    if (isa<PositionalParam>(e.expr) && t.kind == TypeKind::String) {
      e.type = make_pointer(make_int(1, true));
      return;
    }
    if (!isa<Variable>(e.expr) && !isa<Map>(e.expr)) {
      err(e.loc)
          << "The & operator can only take the address of a variable or map";
      return;
    }
    e.type = make_pointer(t);
    return;
  case UnOp::PreInc:
  case UnOp::PreDec:
  case UnOp::PostInc:
  case UnOp::PostDec: {
    const char *op =
        (e.op == UnOp::PreInc || e.op == UnOp::PostInc) ? "++" : "--";
    if (!isa<Variable>(e.expr) && !isa<Map>(e.expr)) {
      err(e.loc) << "The " << op
                 << " operator must be applied to a map or variable";
      return;
    }
    if (!t.is_int() && t.kind != TypeKind::Pointer) {
      err(e.loc) << "The " << op
                 << " operator can not be used on expressions of type '"
                 << type_str(t) << "'";
      return;
    }
    e.type = t;
    return;
  }
  }
}

void Semantic::visit(Ternary &e) {
  visit(e.cond);
  visit(e.left);
  visit(e.right);
  Type c = decay(e.cond->type), l = decay(e.left->type),
       r = decay(e.right->type);
  e.type = Type{};
  if (!c.is_none() && !is_scalar(c))
    err(e.cond->loc) << "Invalid condition in ternary: " << type_str(c);
  if (l.is_none() || r.is_none())
    return;
  if (l.kind == TypeKind::Void && r.kind == TypeKind::Void) {
    e.type = make_void();
    return;
  }
  Type t = common_type(l, r);
  if (t.is_none()) {
    err(e.loc) << "Ternary operator branches have different types: '"
               << type_str(l) << "' and '" << type_str(r) << "'";
    return;
  }
  e.type = t;
}

void Semantic::visit(FieldAccess &e) {
  visit(e.expr);
  Type t = e.expr->type;
  e.type = Type{};
  if (t.is_none())
    return;
  if (e.index >= 0) {
    if (t.kind != TypeKind::Tuple) {
      err(e.loc) << "Can not access index '" << e.index
                 << "' on expression of type '" << type_str(t) << "'";
      return;
    }
    if (e.index >= static_cast<int>(t.fields.size())) {
      err(e.loc) << "Invalid tuple index: " << e.index << ". Found "
                 << t.fields.size() << " elements in tuple.";
      return;
    }
    e.type = *t.fields[e.index].type;
    return;
  }
  // `.` and `->` both read through pointers.
  while (t.kind == TypeKind::Pointer && t.elem)
    t = *t.elem;
  t = complete(t);
  if (t.kind != TypeKind::CStruct && t.kind != TypeKind::Record) {
    err(e.loc) << "Can not access field '" << e.field
               << "' on expression of type '" << type_str(e.expr->type) << "'";
    return;
  }
  if (t.kind == TypeKind::CStruct && t.fields.empty() && t.size == 0) {
    err(e.loc)
        << "Can not access field '" << e.field << "' of " << t.name
        << ": its definition is unknown (define it at the top of the script)";
    return;
  }
  const Field *f = t.field(e.field);
  auto *ident = dyn_cast<Identifier>(e.expr);
  if (!f && ident && ident->ident_kind == IdentKind::Builtin &&
      ident->var == BuiltinVar::Args) {
    if (auto it = args_unreadable_.find(e.field);
        it != args_unreadable_.end()) {
      err(e.loc) << "args." << e.field << " cannot be read: " << it->second;
      return;
    }
  }
  if (!f) {
    auto d = err(e.loc);
    if (t.kind == TypeKind::Record)
      d << "Record does not contain a field named '" << e.field << "'";
    else
      d << t.name << " does not contain a field named '" << e.field << "'";
    std::vector<std::string> names;
    for (const auto &x : t.fields)
      names.push_back(x.name);
    std::string hint = did_you_mean(e.field, names);
    if (!hint.empty())
      d.hint(hint);
    return;
  }
  e.type = *f->type;
}

void Semantic::visit(ArrayAccess &e) {
  visit(e.expr);
  visit(e.index);
  Type t = e.expr->type, i = decay(e.index->type);
  e.type = Type{};
  if (t.is_none() || i.is_none())
    return;
  int64_t idx = 0;
  bool literal = literal_int(e.index, idx);
  if (t.kind == TypeKind::Tuple) {
    if (!literal) {
      err(e.index->loc) << "Tuples can only be indexed with an integer literal";
      return;
    }
    e.tuple_index = idx;
    if (idx < 0 || idx >= static_cast<int64_t>(t.fields.size())) {
      err(e.loc) << "Invalid tuple index: " << idx << ". Found "
                 << t.fields.size() << " elements in tuple.";
      return;
    }
    e.type = *t.fields[idx].type;
    return;
  }
  if (!i.is_intlike()) {
    err(e.index->loc)
        << "The array index operator [] only accepts integers, not "
        << type_str(i);
    return;
  }
  if (t.kind == TypeKind::Array && t.count == 0) {
    // A flexible array member (`int items[]`, `int items[0]`): its
    // elements are wherever the record is, so only a record reached
    // through a pointer has them.
    auto *fa = dyn_cast<FieldAccess>(e.expr);
    if (!fa || decay(fa->expr->type).kind != TypeKind::Pointer) {
      err(e.loc) << "a flexible array member can only be indexed in a record "
                 << "read through a pointer ($p->items[i])";
      return;
    }
    if (literal && idx < 0) {
      err(e.loc) << "the index " << idx << " is out of bounds";
      return;
    }
    e.type = *t.elem;
    return;
  }
  if (t.kind == TypeKind::Array) {
    if (literal && (idx < 0 || static_cast<uint64_t>(idx) >= t.count)) {
      err(e.loc) << "the index " << idx
                 << " is out of bounds for array of size " << t.count;
      return;
    }
    e.type = *t.elem;
    return;
  }
  if (t.kind == TypeKind::Pointer) {
    if (t.elem->kind == TypeKind::Void) {
      err(e.loc) << "Can not index a void pointer: cast it first";
      return;
    }
    e.type = complete(*t.elem);
    return;
  }
  if (t.kind == TypeKind::String) {
    if (literal && (idx < 0 || static_cast<uint64_t>(idx) >= t.size)) {
      err(e.loc) << "the index " << idx
                 << " is out of bounds for string of size " << t.size;
      return;
    }
    e.type = make_int(1, true);
    return;
  }
  err(e.loc)
      << "The array index operator [] can not be used on expressions of type '"
      << type_str(t) << "'";
}

void Semantic::visit(Cast &e) {
  Type to = resolve_spec(e.spec, /*allow_unsized_array=*/true);
  visit(e.expr);
  Type from = decay(e.expr->type);
  e.type = Type{};
  if (to.is_none() || from.is_none())
    return;
  auto bad = [&] {
    err(e.loc) << "Cannot cast from \"" << type_str(from) << "\" to \""
               << type_str(to) << "\"";
  };
  switch (to.kind) {
  case TypeKind::Integer:
  case TypeKind::Boolean:
    if (from.is_intlike() || from.kind == TypeKind::Pointer) {
      e.type = to;
      return;
    }
    if (from.kind == TypeKind::Array && from.size == to.size &&
        from.elem->is_intlike()) {
      e.type = to;
      return;
    }
    bad();
    return;
  case TypeKind::Pointer:
    if (from.is_intlike() || from.kind == TypeKind::Pointer) {
      e.type = to;
      return;
    }
    bad();
    return;
  case TypeKind::Array: {
    if (!to.elem->is_intlike()) {
      bad();
      return;
    }
    // An integer's, an array's or a string's bytes (its NUL too).
    uint32_t from_size = from.is_intlike() || from.kind == TypeKind::Array ||
                                 from.kind == TypeKind::String
                             ? from.size
                             : 0;
    if (from_size == 0) {
      bad();
      return;
    }
    if (to.count == 0) {
      if (from_size % to.elem->size != 0) {
        err(e.loc) << "Cannot determine array size: the element size is "
                   << to.elem->size << " and the cast value is " << from_size
                   << " bytes";
        return;
      }
      to = make_array(*to.elem, from_size / to.elem->size);
    }
    // An integer fills a wider array of up to 8 bytes, extended as a
    // 64-bit value: (int8[8])12345, 12345 being an int16.
    bool widened = from.is_intlike() && to.size <= 8 && to.size > from_size;
    if (to.size != from_size && !widened) {
      err(e.loc) << "Cannot cast from \"" << type_str(from) << "\" to \""
                 << type_str(to) << "\": sizes differ (" << from_size << " and "
                 << to.size << " bytes)";
      return;
    }
    e.type = to;
    return;
  }
  case TypeKind::String:
    if (from.kind == TypeKind::String) {
      e.type = to;
      return;
    }
    if (from.kind == TypeKind::ProbeName) {
      e.type = make_string(kProbeTextSize);
      ctx_.probe_text = true;
      return;
    }
    bad();
    return;
  case TypeKind::Buffer:
  case TypeKind::Inet:
    if (from.kind == to.kind || from.kind == TypeKind::Array) {
      e.type = to;
      return;
    }
    bad();
    return;
  case TypeKind::CStruct:
    err(e.loc) << "Cannot cast to " << to.name << ": cast to a pointer, "
               << "e.g. (" << to.name << " *)";
    return;
  default:
    bad();
    return;
  }
}

void Semantic::visit(Tuple &e) {
  std::vector<Type> types;
  bool ok = true;
  for (auto &x : e.elems) {
    visit(x);
    Type t = decay(x->type);
    if (t.kind == TypeKind::Void || t.is_aggregation()) {
      err(x->loc) << "Value of type '" << type_str(t)
                  << "' cannot be part of a tuple";
      ok = false;
    }
    if (t.is_none())
      ok = false;
    // Elements keep their own sizes, laid out as a C struct: sizeof of
    // ((int8)1, (int16)1, (int32)1) is 8, as in bpftrace.
    types.push_back(t);
  }
  e.type = ok ? make_tuple(types) : Type{};
}

void Semantic::visit(Record &e) {
  std::vector<Type> types;
  bool ok = true;
  for (size_t i = 0; i < e.elems.size(); i++) {
    for (size_t j = 0; j < i; j++)
      if (e.names[i] == e.names[j]) {
        err(e.name_locs[i]) << "Duplicate field name in record: " << e.names[i];
        ok = false;
      }
    visit(e.elems[i]);
    Type t = decay(e.elems[i]->type);
    if (t.kind == TypeKind::Void || t.is_aggregation()) {
      err(e.elems[i]->loc) << "Value of type '" << type_str(t)
                           << "' cannot be part of a record";
      ok = false;
    }
    if (t.is_none())
      ok = false;
    types.push_back(t);
  }
  e.type = ok ? make_record(e.names, types) : Type{};
}

void Semantic::visit(BlockExpr &e) {
  push_scope();
  for (auto &s : e.block->stmts)
    visit(s);
  if (e.block->value) {
    visit(e.block->value);
    e.type = e.block->value->type;
  } else {
    e.type = make_void();
  }
  pop_scope();
}

// A macro's typeof() argument where sizeof/offsetof take an operand:
// `typeof(T)` is T and `typeof(T)[N]` an array of N of them.
static bool type_operand(const Expr *e, TypeSpec &out) {
  if (auto *t = dyn_cast<TypeOf>(e)) {
    out = t->spec;
    return true;
  }
  auto *a = dyn_cast<ArrayAccess>(e);
  auto *n = a ? dyn_cast<Integer>(a->index) : nullptr;
  if (!n || n->negative || !type_operand(a->expr, out))
    return false;
  out.suffixes.push_back({false, n->value});
  return true;
}

void Semantic::visit(TypeOf &e) {
  err(e.loc) << "typeof() is a type, not a value: pass it to a macro that "
                "uses it as a type (a cast, sizeof, offsetof)";
}

void Semantic::visit(Sizeof &e) {
  e.type = make_int(8, false);
  Type t;
  TypeSpec operand;
  if (e.has_spec) {
    t = resolve_spec(e.spec);
  } else if (type_operand(e.expr, operand)) {
    t = resolve_spec(operand);
  } else {
    // sizeof(name): a bare name that is not a value names a type.
    if (auto *id = dyn_cast<Identifier>(e.expr);
        id && !is_builtin_name(id->name) &&
        !ctx_.c_types.enum_values.count(id->name)) {
      TypeSpec spec;
      spec.loc = id->loc;
      spec.base = TypeSpec::Base::Named;
      spec.name = id->name;
      t = resolve_spec(spec);
    } else {
      visit(e.expr);
      t = decay(e.expr->type);
    }
  }
  if (!t.is_none())
    e.value = t.size;
}

void Semantic::visit(Offsetof &e) {
  e.type = make_int(8, false);
  Type t;
  TypeSpec operand;
  if (e.has_spec) {
    t = resolve_spec(e.spec);
  } else if (type_operand(e.expr, operand)) {
    t = resolve_spec(operand);
  } else {
    visit(e.expr);
    t = e.expr->type;
    while (t.kind == TypeKind::Pointer && t.elem)
      t = *t.elem;
  }
  if (t.is_none())
    return;
  t = complete(t);
  uint64_t offset = 0;
  for (const auto &name : e.fields) {
    if (t.kind != TypeKind::CStruct && t.kind != TypeKind::Record) {
      err(e.loc) << "offsetof() needs a struct, not '" << type_str(t) << "'";
      return;
    }
    const Field *f = t.field(name);
    if (!f) {
      err(e.loc) << "'" << type_str(t) << "' has no field named '" << name
                 << "'";
      return;
    }
    offset += f->offset;
    t = complete(*f->type);
  }
  e.value = offset;
}

} // namespace ubtrace::ast
