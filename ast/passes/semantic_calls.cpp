// Semantic analysis of function calls: arity, argument kinds and types,
// where each function may be used, and the type it returns.
#include "ast/builtins.h"
#include "ast/passes/semantic_internal.h"
#include "ast/signals.h"
#include "ast/suggest.h"

#include <cctype>
#include <cstring>
#include <map>
#include <set>

namespace ubtrace::ast {

const std::set<std::string> &x86_registers() {
  static const std::set<std::string> s = {
      "r15", "r14", "r13",   "r12", "bp",  "bx",  "r11", "r10",
      "r9",  "r8",  "ax",    "cx",  "dx",  "si",  "di",  "orig_ax",
      "ip",  "cs",  "flags", "sp",  "ss",  "rip", "rsp", "rbp",
      "rax", "rbx", "rcx",   "rdx", "rsi", "rdi", "pc"};
  return s;
}

const char *kind_name(const Type &t) {
  switch (t.kind) {
  case TypeKind::Integer:
    return "integer";
  case TypeKind::Boolean:
    return "boolean";
  case TypeKind::String:
    return "string";
  case TypeKind::Pointer:
    return "pointer";
  case TypeKind::Tuple:
    return "tuple";
  case TypeKind::Record:
    return "record";
  case TypeKind::Array:
    return "array";
  case TypeKind::CStruct:
    return "struct";
  case TypeKind::Buffer:
    return "buffer";
  case TypeKind::Void:
    return "void";
  default:
    return "value";
  }
}

bool Semantic::check_arity(Call &c, size_t min, size_t max) {
  size_t n = c.args.size();
  if (n >= min && n <= max)
    return true;
  auto d = err(c.loc);
  d << c.name << "() ";
  if (min == max) {
    if (min == 0)
      d << "requires no arguments";
    else if (min == 1)
      d << "requires one argument";
    else
      d << "requires " << min << " arguments";
  } else if (n < min) {
    d << "requires at least " << min << " argument" << (min == 1 ? "" : "s");
  } else {
    d << "takes up to " << max << " argument" << (max == 1 ? "" : "s");
  }
  d << " (" << n << " provided)";
  return false;
}

bool Semantic::expect_map_arg(Call &c, size_t i, bool allow_keys) {
  auto *m = dyn_cast<Map>(c.args[i]);
  if (!m || (m->subscripted && !allow_keys)) {
    err(c.loc) << c.name << "() expects a map to be provided";
    return false;
  }
  return true;
}

bool Semantic::expect_int_arg(Call &c, size_t i) {
  Type t = decay(c.args[i]->type);
  if (t.is_none())
    return false;
  if (!t.is_intlike()) {
    err(c.loc) << c.name << "() only supports integer arguments ("
               << kind_name(t) << " provided)";
    return false;
  }
  return true;
}

bool Semantic::expect_string_literal(Call &c, size_t i, std::string &out) {
  if (auto *s = dyn_cast<String>(c.args[i])) {
    out = s->value;
    return true;
  }
  auto d = err(c.loc);
  d << c.name << "() expects a string literal";
  if (!c.args[i]->type.is(TypeKind::String))
    d << " (" << kind_name(c.args[i]->type) << " provided)";
  return false;
}

bool Semantic::expect_int_literal(Call &c, size_t i, int64_t &out) {
  if (literal_int(c.args[i], out))
    return true;
  if (c.args[i]->type.is_none())
    return false; // reported already
  if (auto *p = dyn_cast<PositionalParam>(c.args[i])) {
    if (p->n >= 1 && p->n <= static_cast<int>(ctx_.positional.size())) {
      char *end = nullptr;
      out = std::strtoll(ctx_.positional[p->n - 1].c_str(), &end, 0);
      if (end && *end == '\0')
        return true;
    } else {
      out = 0;
      return true;
    }
  }
  err(c.args[i]->loc) << c.name << "() expects an integer literal";
  return false;
}

namespace {

// A literal integer as sign and magnitude (so that 2^64 - 1 stays itself);
// false when `e` is not a literal.
bool literal_magnitude(const Expr *e, bool &negative, uint64_t &magnitude) {
  if (auto *i = dyn_cast<Integer>(e)) {
    negative = i->negative && i->value != 0;
    magnitude = i->value;
    return true;
  }
  if (auto *c = dyn_cast<Cast>(e))
    return literal_magnitude(c->expr, negative, magnitude);
  if (auto *u = dyn_cast<Unop>(e); u && u->op == UnOp::Neg) {
    if (!literal_magnitude(u->expr, negative, magnitude))
      return false;
    negative = !negative && magnitude != 0;
    return true;
  }
  return false;
}

} // namespace

bool Semantic::check_literal_range(Call &c, size_t i, int64_t lo, int64_t hi,
                                   const char *what) {
  bool negative = false;
  uint64_t magnitude = 0;
  if (!literal_magnitude(c.args[i], negative, magnitude))
    return true;
  bool below = negative ? lo >= 0 || magnitude > uint64_t(-(lo + 1)) + 1
                        : lo > 0 && magnitude < uint64_t(lo);
  bool above = !negative && (hi < 0 || magnitude > uint64_t(hi));
  if (!below && !above)
    return true;
  err(c.loc) << (negative ? "-" : "") << magnitude << " is not a valid " << what
             << ", allowed range: [" << lo << "," << hi << "]";
  return false;
}

void Semantic::visit(Call &c) {
  // A call that failed its checks has no type, so that its errors do not
  // cascade into "void cannot be assigned" and the like.
  size_t errors = error_count();
  check_call(c);
  if (error_count() != errors)
    c.type = Type{};
}

void Semantic::check_call(Call &c) {
  const std::string &n = c.name;
  c.fn = lookup_function(n).value_or(BuiltinFn::User);
  const BuiltinFnInfo &row = builtin_fn_info(c.fn);
  bool map_assign = in_map_assign_;
  in_map_assign_ = false;
  // Arguments first. A map argument of clear(@m) and friends is not a read.
  for (size_t i = 0; i < c.args.size(); i++) {
    Expr *&a = c.args[i];
    auto *m = dyn_cast<Map>(a);
    if (m && !m->subscripted && (row.flags & BF_MAP_ARG)) {
      whole_map(*m);
      continue;
    }
    if (c.fn == BuiltinFn::Str && i == 0)
      if (auto *p = dyn_cast<PositionalParam>(a))
        p->as_string = true;
    visit(a);
  }
  in_map_assign_ = map_assign;
  c.type = make_void();

  if (c.fn != BuiltinFn::User) {
    if (row.probes == PS_KERNEL) {
      err(c.loc)
          << n << "() works on kernel probes only, which ubtrace does not run";
      return;
    }
    if (gpu_probe() && !(row.probes & PS_GPU_ANY)) {
      err(c.loc) << n << "() can not run on the GPU: it is not available in "
                 << probe_kinds() << " probes";
      return;
    }
    if ((row.flags & BF_UNSAFE) && !ctx_.unsafe) {
      // bpftrace's stdlib macros (write_user) say it their own way.
      if (c.fn == BuiltinFn::WriteUser)
        err(c.loc) << n << "() is unsafe. To use you need the --unsafe flag";
      else
        err(c.loc) << n << "() is an unsafe function being used in safe mode";
      return;
    }
    if (probe_ && !in_probe_set(row.probes)) {
      err(c.loc) << n << "() can not be used in " << probe_kinds() << " probes";
      return;
    }
  }
  if (!(row.flags & BF_AGGREGATION))
    in_map_assign_ = false;

  switch (c.fn) {
  case BuiltinFn::Printf:
  case BuiltinFn::Debugf:
  case BuiltinFn::Errorf:
  case BuiltinFn::Warnf:
  case BuiltinFn::System:
  case BuiltinFn::Cat:
    return check_format(c);
  case BuiltinFn::Count:
  case BuiltinFn::Sum:
  case BuiltinFn::Min:
  case BuiltinFn::Max:
  case BuiltinFn::Avg:
  case BuiltinFn::Stats:
  case BuiltinFn::Hist:
  case BuiltinFn::Lhist:
  case BuiltinFn::Tseries:
    return check_aggregation(c);
  case BuiltinFn::Print:
    return check_print(c);
  case BuiltinFn::Time:
    return check_time(c);
  case BuiltinFn::Join:
    return check_join(c);
  case BuiltinFn::Clear:
  case BuiltinFn::Zero:
    return check_clear_zero(c);
  case BuiltinFn::Delete:
    return check_delete(c);
  case BuiltinFn::HasKey:
    return check_has_key(c);
  case BuiltinFn::Len:
    return check_len(c);
  case BuiltinFn::Str:
    return check_str(c);
  case BuiltinFn::Buf:
    return check_buf(c);
  case BuiltinFn::Strncmp:
    return check_strncmp(c);
  case BuiltinFn::Strcontains:
    return check_strcontains(c);
  case BuiltinFn::Strlen:
    return check_strlen(c);
  case BuiltinFn::Strerror:
  case BuiltinFn::SignalName:
  case BuiltinFn::SyscallName:
    return check_strerror(c);
  case BuiltinFn::Strftime:
    return check_strftime(c);
  case BuiltinFn::Ustack:
  case BuiltinFn::DwUstack:
  case BuiltinFn::Kstack:
    return check_stack(c);
  case BuiltinFn::Usym:
  case BuiltinFn::Ksym:
    return check_sym(c);
  case BuiltinFn::Uaddr:
    return check_addr(c);
  case BuiltinFn::Kptr:
  case BuiltinFn::Uptr:
    return check_ptr(c);
  case BuiltinFn::Ntop:
    return check_ntop(c);
  case BuiltinFn::Pton:
    return check_pton(c);
  case BuiltinFn::Macaddr:
    return check_macaddr(c);
  case BuiltinFn::Pid:
  case BuiltinFn::Tid:
    return check_pid_tid(c);
  case BuiltinFn::Comm:
  case BuiltinFn::Pcomm:
  case BuiltinFn::LeaderComm:
    return check_comm(c);
  case BuiltinFn::Nsecs:
    return check_nsecs(c);
  case BuiltinFn::Cgroupid:
    return check_cgroupid(c);
  case BuiltinFn::Bswap:
    return check_bswap(c);
  case BuiltinFn::Signal:
    return check_signal(c);
  case BuiltinFn::WriteUser:
    return check_write_user(c);
  case BuiltinFn::Exit:
    return check_exit(c);
  case BuiltinFn::Assert:
    return check_assert(c);
  case BuiltinFn::StaticAssert:
    return check_static_assert(c);
  case BuiltinFn::Reg:
    return check_reg(c);
    // bpftrace's kernel-side functions (UBT_BUILTIN_KERNEL_FN rows)
#define UBT_BUILTIN_FN(id, name, min, max, probes, flags)
#define UBT_BUILTIN_KERNEL_FN(id, name, min, max) case BuiltinFn::id:
#include "ast/builtins.def"
#undef UBT_BUILTIN_KERNEL_FN
#undef UBT_BUILTIN_FN
    return; // refused above
  case BuiltinFn::User:
    return check_user_call(c);
  }
}

void Semantic::check_user_call(Call &c) {
  const std::string &n = c.name;
  // A user function (fn)?
  for (auto *f : ctx_.root->functions) {
    if (f->name != n)
      continue;
    if (c.args.size() != f->params.size()) {
      err(c.loc) << "Function " << n << " requires " << f->params.size()
                 << " arguments (" << c.args.size() << " provided)";
      return;
    }
    for (size_t i = 0; i < c.args.size(); i++) {
      Type want = resolve_spec(f->params[i].spec);
      Type got = decay(c.args[i]->type);
      if (!want.is_none() && !got.is_none() && common_type(want, got).is_none())
        err(c.args[i]->loc)
            << "Function " << n << " argument " << i + 1 << " expects "
            << type_str(want) << ", got " << type_str(got);
    }
    c.type = resolve_spec(f->ret);
    return;
  }

  auto d = err(c.name_loc.valid() ? c.name_loc : c.loc);
  d << "Unknown function: '" << n << "'";
  std::vector<std::string> names;
  size_t count = 0;
  const BuiltinFnInfo *rows = builtin_fn_table(count);
  for (size_t i = 0; i < count; i++)
    if (rows[i].probes != PS_KERNEL)
      names.emplace_back(rows[i].name);
  for (auto *f : ctx_.root->functions)
    names.push_back(f->name);
  std::string hint = did_you_mean(n, names);
  if (!hint.empty())
    d.hint(hint);
  c.type = Type{};
}

} // namespace ubtrace::ast
