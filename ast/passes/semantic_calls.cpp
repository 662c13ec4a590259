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

namespace {

// The widest field width or precision a format may ask for.
constexpr unsigned long kMaxPrintfWidth = 65535;

const std::vector<std::string> &function_names() {
  static const std::vector<std::string> names = {
      "avg",      "bswap",   "buf",         "cat",      "cgroup_path",
      "cgroupid", "clear",   "count",       "debugf",   "delete",
      "errorf",   "exit",    "has_key",     "hist",     "join",
      "kaddr",    "kptr",    "kstack",      "ksym",     "len",
      "lhist",    "macaddr", "max",         "min",      "nsecs",
      "ntop",     "pid",     "tid",         "comm",     "print",
      "printf",   "pton",    "reg",         "signal",   "sizeof",
      "stats",    "str",     "strcontains", "strerror", "strftime",
      "strlen",   "strncmp", "sum",         "system",   "time",
      "uaddr",    "uptr",    "ustack",      "usym",     "warnf",
      "zero",     "offsetof"};
  return names;
}

// Functions that need code the GPU cannot run (host system calls, host
// symbols, host stacks).
const std::set<std::string> &host_only_functions() {
  static const std::set<std::string> s = {
      "system",   "cat",         "signal", "ustack",   "kstack",
      "usym",     "ksym",        "uaddr",  "kaddr",    "reg",
      "cgroupid", "cgroup_path", "join",   "override", "path",
      "strerror", "macaddr",     "ntop",   "pton"};
  return s;
}

// Functions of kernel-side bpftrace probes that have no meaning here.
const std::set<std::string> &kernel_only_functions() {
  static const std::set<std::string> s = {
      "override",      "path",          "percpu_kaddr", "skboutput",
      "socket_cookie", "kfunc_allowed", "kfunc_exist",  "unwatch",
      "signal_thread", "cgroup_path",   "write_user",   "fail",
      "tseries"};
  return s;
}

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

} // namespace

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

// printf-style format strings: each conversion against its argument.
void Semantic::check_format(Call &c) {
  if (!check_arity(c, 1, SIZE_MAX))
    return;
  std::string fmt;
  if (!expect_string_literal(c, 0, fmt))
    return;
  struct Conv {
    std::string text;
    char conv;
  };
  std::vector<Conv> convs;
  for (size_t i = 0; i < fmt.size(); i++) {
    if (fmt[i] != '%')
      continue;
    size_t start = i++;
    if (i < fmt.size() && fmt[i] == '%')
      continue;
    while (i < fmt.size() && std::strchr("-+ #0", fmt[i]))
      i++;
    // Field width and precision: bounded, so that a typo cannot make every
    // event print megabytes of padding.
    auto number = [&](const char *what) {
      size_t from = i;
      while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])))
        i++;
      if (i - from > 5 || (i > from && std::stoul(fmt.substr(from, i - from)) >
                                           kMaxPrintfWidth)) {
        err(c.loc) << c.name << ": " << fmt.substr(from, i - from)
                   << " is not a valid " << what << " in '"
                   << fmt.substr(start, i - start) << "', allowed range: [0,"
                   << kMaxPrintfWidth << "]";
        return false;
      }
      return true;
    };
    if (!number("field width"))
      return;
    if (i < fmt.size() && fmt[i] == '.') {
      i++;
      if (!number("precision"))
        return;
    }
    while (i < fmt.size() && std::strchr("hlLqjzt", fmt[i]))
      i++;
    if (i >= fmt.size()) {
      err(c.loc) << c.name << ": incomplete format specifier at the end of '"
                 << fmt << "'";
      return;
    }
    char conv = fmt[i];
    // %r, %rx, %rh print buffers.
    if (conv == 'r' && i + 1 < fmt.size() &&
        (fmt[i + 1] == 'x' || fmt[i + 1] == 'h'))
      i++;
    if (!std::strchr("diuxXocspr", conv)) {
      err(c.loc) << c.name << ": invalid format specifier '"
                 << fmt.substr(start, i - start + 1) << "'"
                 << (std::strchr("eEfFgGaA", conv)
                         ? " (floating point is not supported)"
                         : "");
      return;
    }
    convs.push_back({fmt.substr(start, i - start + 1), conv});
  }
  size_t nargs = c.args.size() - 1;
  if (nargs < convs.size()) {
    err(c.loc) << c.name << ": Not enough arguments for format string ("
               << nargs << " supplied, " << convs.size() << " expected)";
    return;
  }
  if (nargs > convs.size()) {
    err(c.loc) << c.name << ": Too many arguments for format string (" << nargs
               << " supplied, " << convs.size() << " expected)";
    return;
  }
  for (size_t i = 0; i < convs.size(); i++) {
    Expr *arg = c.args[i + 1];
    Type t = decay(arg->type);
    if (t.is_none())
      continue;
    if (t.kind == TypeKind::Void || t.kind == TypeKind::Hist ||
        t.kind == TypeKind::LHist || t.kind == TypeKind::Stats) {
      err(arg->loc) << c.name << ": can not print a value of type '"
                    << type_str(t) << "'";
      continue;
    }
    switch (convs[i].conv) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'c':
    case 'p':
      if (!t.is_intlike() && t.kind != TypeKind::Pointer)
        err(c.loc) << c.name << ": " << convs[i].text
                   << " specifier expects a value of type integer ("
                   << kind_name(t) << " supplied)";
      break;
    case 'r':
      if (t.kind != TypeKind::Buffer && t.kind != TypeKind::String &&
          t.kind != TypeKind::Array)
        err(c.loc) << c.name << ": " << convs[i].text
                   << " specifier expects a value of type buffer ("
                   << kind_name(t) << " supplied)";
      break;
    default: // %s prints anything
      break;
    }
  }
}

void Semantic::check_aggregation(Call &c) {
  const std::string &n = c.name;
  if (!in_map_assign_) {
    err(c.loc) << n << "() should be directly assigned to a map";
    c.type = Type{};
    return;
  }
  c.type = Type{};
  if (n == "count") {
    if (check_arity(c, 0, 0))
      c.type = make_simple(TypeKind::Count, 8);
    return;
  }
  if (n == "sum" || n == "min" || n == "max" || n == "avg" || n == "stats") {
    if (!check_arity(c, 1, 1) || !expect_int_arg(c, 0))
      return;
    Type arg = decay(c.args[0]->type);
    TypeKind k = n == "sum"   ? TypeKind::Sum
                 : n == "min" ? TypeKind::Min
                 : n == "max" ? TypeKind::Max
                 : n == "avg" ? TypeKind::Avg
                              : TypeKind::Stats;
    c.type = make_simple(k, 8);
    c.type.agg_signed = arg.is_int() ? arg.is_signed : false;
    return;
  }
  if (n == "hist") {
    if (!check_arity(c, 1, 2) || !expect_int_arg(c, 0))
      return;
    int64_t bits = 0;
    if (c.args.size() == 2) {
      if (!expect_int_literal(c, 1, bits))
        return;
      if (bits < 0 || bits > 5) {
        err(c.args[1]->loc) << "hist: bits " << bits << " must be 0..5";
        return;
      }
    }
    c.type = make_simple(TypeKind::Hist, 8);
    c.type.hist_bits = static_cast<uint32_t>(bits);
    return;
  }
  if (n == "lhist") {
    if (!check_arity(c, 4, 4) || !expect_int_arg(c, 0))
      return;
    int64_t mn, mx, step;
    if (!expect_int_literal(c, 1, mn) || !expect_int_literal(c, 2, mx) ||
        !expect_int_literal(c, 3, step))
      return;
    if (mn < 0) {
      err(c.args[1]->loc)
          << "lhist: invalid min value (must be non-negative literal)";
      return;
    }
    if (step <= 0) {
      err(c.args[3]->loc) << "lhist() step must be >= 1 (" << step
                          << " provided)";
      return;
    }
    if (mx <= mn) {
      err(c.loc) << "lhist() max must be greater than min (" << mn << ", " << mx
                 << " provided)";
      return;
    }
    if ((mx - mn) / step > 1000) {
      err(c.loc) << "lhist() too many buckets, must be <= 1000 (would need "
                 << (mx - mn) / step << ")";
      return;
    }
    c.type = make_simple(TypeKind::LHist, 8);
    c.type.lhist_min = mn;
    c.type.lhist_max = mx;
    c.type.lhist_step = step;
    return;
  }
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
  bool map_assign = in_map_assign_;
  in_map_assign_ = false;
  // Arguments first. A map argument of clear(@m) and friends is not a read.
  for (size_t i = 0; i < c.args.size(); i++) {
    Expr *&a = c.args[i];
    auto *m = dyn_cast<Map>(a);
    bool is_whole = m && !m->subscripted &&
                    (n == "clear" || n == "zero" || n == "print" ||
                     n == "len" || n == "delete" || n == "has_key");
    if (is_whole) {
      whole_map(*m);
      continue;
    }
    if (n == "str" && i == 0)
      if (auto *p = dyn_cast<PositionalParam>(a))
        p->as_string = true;
    visit(a);
  }
  in_map_assign_ = map_assign;
  c.type = make_void();

  if (gpu_probe() && host_only_functions().count(n)) {
    err(c.loc) << n << "() can not run on the GPU: it is not available in "
               << probe_kinds() << " probes";
    return;
  }
  if (kernel_only_functions().count(n)) {
    err(c.loc) << n
               << "() works on kernel probes only, which ubtrace does not run";
    return;
  }

  if (n == "count" || n == "sum" || n == "min" || n == "max" || n == "avg" ||
      n == "stats" || n == "hist" || n == "lhist") {
    check_aggregation(c);
    return;
  }
  in_map_assign_ = false;

  if (n == "printf" || n == "errorf" || n == "warnf" || n == "debugf" ||
      n == "system" || n == "cat") {
    if ((n == "system") && !ctx_.unsafe) {
      err(c.loc) << n << "() is an unsafe function being used in safe mode";
      return;
    }
    check_format(c);
    return;
  }
  if (n == "print") {
    if (!check_arity(c, 1, 3))
      return;
    auto *m = dyn_cast<Map>(c.args[0]);
    if (m && !m->subscripted) {
      // print(@m, top, div): how many entries (0: all), divided by what.
      for (size_t i = 1; i < c.args.size(); i++)
        if (expect_int_arg(c, i))
          check_literal_range(c, i, i == 1 ? 0 : 1, INT64_MAX,
                              i == 1 ? "print() top" : "print() divisor");
      return;
    }
    if (c.args.size() > 1) {
      err(c.loc) << "Non-map print() only takes 1 argument, " << c.args.size()
                 << " found";
      return;
    }
    Type t = c.args[0]->type;
    if (t.kind == TypeKind::Void)
      err(c.loc) << "print() can not print a value of type void";
    return;
  }
  if (n == "clear" || n == "zero") {
    if (check_arity(c, 1, 1))
      expect_map_arg(c, 0);
    return;
  }
  if (n == "delete") {
    if (!check_arity(c, 1, 2) || !expect_map_arg(c, 0, c.args.size() == 1))
      return;
    auto *m = static_cast<Map *>(c.args[0]);
    if (c.args.size() == 2) {
      // delete(@m, key): check the key like @m[key] would.
      Map probe_map(m->loc, m->name);
      probe_map.keys = {c.args[1]};
      probe_map.subscripted = true;
      check_map_keys(probe_map);
    } else if (!m->subscripted && map_info(m->name, m->loc).keyed) {
      err(c.loc) << "delete() of a keyed map needs a key: delete(" << m->name
                 << ", key) or delete(" << m->name << "[key])";
    }
    c.type = make_bool();
    return;
  }
  if (n == "has_key") {
    if (!check_arity(c, 2, 2) || !expect_map_arg(c, 0))
      return;
    auto *m = static_cast<Map *>(c.args[0]);
    Map probe_map(m->loc, m->name);
    probe_map.keys = {c.args[1]};
    probe_map.subscripted = true;
    check_map_keys(probe_map);
    c.type = make_bool();
    return;
  }
  if (n == "len") {
    if (!check_arity(c, 1, 1))
      return;
    Type t = c.args[0]->type;
    auto *m = dyn_cast<Map>(c.args[0]);
    if ((m && !m->subscripted) || t.kind == TypeKind::UStack ||
        t.kind == TypeKind::KStack) {
      c.type = make_int(8, true);
      return;
    }
    err(c.loc) << "len() expects a map or stack to be provided";
    return;
  }
  if (n == "exit") {
    // A process's exit status is 8 bits: exit(256) would exit 0.
    if (check_arity(c, 0, 1) && c.args.size() == 1 && expect_int_arg(c, 0))
      check_literal_range(c, 0, 0, 255, "exit code");
    return;
  }
  if (n == "time") {
    std::string fmt;
    if (check_arity(c, 0, 1) && c.args.size() == 1)
      expect_string_literal(c, 0, fmt);
    return;
  }
  if (n == "strftime") {
    std::string fmt;
    if (!check_arity(c, 2, 2) || !expect_string_literal(c, 0, fmt) ||
        !expect_int_arg(c, 1))
      return;
    c.type = make_simple(TypeKind::Timestamp, 16);
    return;
  }
  if (n == "str") {
    if (!check_arity(c, 1, 2))
      return;
    Type t = decay(c.args[0]->type);
    if (t.is_none())
      return;
    if (t.kind != TypeKind::String && !t.is_intlike() &&
        t.kind != TypeKind::Pointer && t.kind != TypeKind::Array) {
      err(c.loc)
          << "str() expects an integer or a pointer type as first argument ("
          << type_str(t) << " provided)";
      return;
    }
    uint32_t size = max_strlen_;
    if (c.args.size() == 2) {
      if (!expect_int_arg(c, 1))
        return;
      int64_t len;
      if (literal_int(c.args[1], len)) {
        if (len < 0) {
          err(c.args[1]->loc)
              << "str() cannot use negative length (" << len << ")";
          return;
        }
        size = static_cast<uint32_t>(std::min<int64_t>(len + 1, max_strlen_));
      }
    }
    // str("literal") and str($1) are the literal itself, whole (as in
    // bpftrace 0.26); other strings are cut to max_strlen.
    if (t.kind == TypeKind::String && c.args.size() == 1)
      size = isa<String>(c.args[0]) || isa<PositionalParam>(c.args[0])
                 ? t.size
                 : std::min(t.size, max_strlen_);
    c.type = make_string(size);
    return;
  }
  if (n == "buf") {
    if (!check_arity(c, 1, 2))
      return;
    Type t = decay(c.args[0]->type);
    if (t.is_none())
      return;
    uint32_t size = max_strlen_;
    if (t.kind == TypeKind::Array && c.args.size() == 1) {
      size = t.size;
    } else if (c.args.size() == 2) {
      if (!expect_int_arg(c, 1))
        return;
      int64_t len;
      if (literal_int(c.args[1], len)) {
        if (len < 0) {
          err(c.args[1]->loc)
              << "buf() cannot use negative length (" << len << ")";
          return;
        }
        size = static_cast<uint32_t>(len);
      }
    } else if (t.kind != TypeKind::Array) {
      err(c.loc) << "buf() needs a length unless its argument is an array";
      return;
    }
    c.type = make_buffer(size);
    return;
  }
  if (n == "join") {
    if (!check_arity(c, 1, 2))
      return;
    Type t = decay(c.args[0]->type);
    if (!t.is_none() && !t.is_intlike() && t.kind != TypeKind::Pointer)
      err(c.loc) << "join() expects a pointer to an array of strings";
    std::string sep;
    if (c.args.size() == 2)
      expect_string_literal(c, 1, sep);
    return;
  }
  if (n == "ustack" || n == "kstack") {
    if (!check_arity(c, 0, 2))
      return;
    uint8_t mode = stack_mode_;
    int64_t limit = 127;
    for (size_t i = 0; i < c.args.size(); i++) {
      if (auto *id = dyn_cast<Identifier>(c.args[i]);
          id && id->ident_kind == IdentKind::StackMode) {
        if (i != 0) {
          err(c.args[i]->loc) << n << "(): the stack mode comes first";
          return;
        }
        mode = id->name == "bpftrace" ? 0 : id->name == "perf" ? 1 : 2;
        continue;
      }
      if (!expect_int_literal(c, i, limit))
        return;
      if (limit < 0 || limit > 1024) {
        err(c.args[i]->loc) << n << "(): the stack limit must be 0..1024";
        return;
      }
    }
    c.type =
        make_simple(n == "ustack" ? TypeKind::UStack : TypeKind::KStack, 0);
    c.type.stack_mode = mode;
    c.type.stack_limit = static_cast<uint32_t>(limit);
    // nr, frames, and for user stacks the pid (symbolised later by pid).
    c.type.size = static_cast<uint32_t>(8 * (limit + (n == "ustack" ? 2 : 1)));
    return;
  }
  if (n == "usym" || n == "ksym") {
    if (check_arity(c, 1, 1) && (decay(c.args[0]->type).is_intlike() ||
                                 c.args[0]->type.kind == TypeKind::Pointer))
      c.type = make_simple(n == "usym" ? TypeKind::USym : TypeKind::KSym,
                           n == "usym" ? 16 : 8);
    else if (c.args.size() == 1)
      err(c.loc) << n << "() expects an integer or pointer argument";
    return;
  }
  if (n == "uaddr" || n == "kaddr") {
    std::string sym;
    if (check_arity(c, 1, 1) && expect_string_literal(c, 0, sym))
      c.type =
          n == "uaddr" ? make_pointer(make_int(8, false)) : make_int(8, false);
    return;
  }
  if (n == "reg") {
    std::string r;
    if (!check_arity(c, 1, 1) || !expect_string_literal(c, 0, r))
      return;
    if (!x86_registers().count(r)) {
      auto d = err(c.loc);
      d << "'" << r << "' is not a valid register";
      std::vector<std::string> names(x86_registers().begin(),
                                     x86_registers().end());
      std::string hint = did_you_mean(r, names);
      if (!hint.empty())
        d.hint(hint);
      return;
    }
    if (probe_ && !in_probe_set(PS_USER | PS_KERNEL))
      err(c.loc) << "reg() can not be used in " << probe_kinds() << " probes";
    c.type = make_int(8, false);
    return;
  }
  if (n == "ntop") {
    if (!check_arity(c, 1, 2))
      return;
    Type t = decay(c.args.back()->type);
    if (c.args.size() == 2)
      expect_int_arg(c, 0);
    if (!t.is_none() && !t.is_intlike() && t.kind != TypeKind::Array &&
        t.kind != TypeKind::Pointer)
      err(c.loc) << "ntop() expects an integer or array argument, got "
                 << type_str(t);
    c.type = make_simple(TypeKind::Inet, 24);
    return;
  }
  if (n == "pton") {
    std::string addr;
    if (!check_arity(c, 1, 1) || !expect_string_literal(c, 0, addr))
      return;
    bool v6 = addr.find(':') != std::string::npos;
    c.type = make_array(make_int(1, false), v6 ? 16 : 4);
    return;
  }
  if (n == "macaddr") {
    if (check_arity(c, 1, 1))
      c.type = make_simple(TypeKind::MacAddr, 6);
    return;
  }
  if (n == "cgroupid") {
    std::string path;
    if (check_arity(c, 1, 1) && expect_string_literal(c, 0, path))
      c.type = make_int(8, false);
    return;
  }
  if (n == "strncmp") {
    if (!check_arity(c, 3, 3))
      return;
    for (size_t i = 0; i < 2; i++) {
      Type t = c.args[i]->type;
      if (!t.is_none() && t.kind != TypeKind::String)
        err(c.loc) << "strncmp() expects string arguments (" << kind_name(t)
                   << " provided)";
    }
    int64_t len;
    if (expect_int_literal(c, 2, len) && len < 0)
      err(c.args[2]->loc) << "strncmp() length must be >= 0";
    c.type = make_int(8, true);
    return;
  }
  if (n == "strcontains") {
    if (!check_arity(c, 2, 2))
      return;
    for (size_t i = 0; i < 2; i++) {
      Type t = c.args[i]->type;
      if (!t.is_none() && t.kind != TypeKind::String)
        err(c.loc) << "strcontains() expects string arguments (" << kind_name(t)
                   << " provided)";
    }
    c.type = make_bool();
    return;
  }
  if (n == "strlen") {
    if (!check_arity(c, 1, 1))
      return;
    Type t = c.args[0]->type;
    if (!t.is_none() && t.kind != TypeKind::String)
      err(c.loc) << "strlen() expects a string argument (" << kind_name(t)
                 << " provided)";
    c.type = make_int(8, false);
    return;
  }
  if (n == "strerror") {
    if (check_arity(c, 1, 1) && expect_int_arg(c, 0))
      c.type = make_simple(TypeKind::StrError, 8);
    return;
  }
  if (n == "bswap") {
    if (!check_arity(c, 1, 1) || !expect_int_arg(c, 0))
      return;
    c.type = decay(c.args[0]->type);
    if (c.type.kind == TypeKind::Boolean)
      c.type = make_int(1, false);
    c.type.name.clear();
    return;
  }
  if (n == "kptr" || n == "uptr") {
    if (check_arity(c, 1, 1))
      c.type = c.args[0]->type;
    return;
  }
  if (n == "nsecs") {
    if (!check_arity(c, 0, 1))
      return;
    if (c.args.size() == 1) {
      auto *id = dyn_cast<Identifier>(c.args[0]);
      if (!id || id->ident_kind != IdentKind::TimestampMode ||
          id->name == "curr_ns" || id->name == "init") {
        err(c.args[0]->loc)
            << "nsecs() takes a clock: monotonic, boot, tai or sw_tai";
        return;
      }
    }
    c.type = make_int(8, false);
    return;
  }
  if (n == "pid" || n == "tid") {
    if (!check_arity(c, 0, 1))
      return;
    if (c.args.size() == 1) {
      auto *id = dyn_cast<Identifier>(c.args[0]);
      if (!id || (id->name != "curr_ns" && id->name != "init")) {
        err(c.args[0]->loc) << n << "() takes curr_ns or init";
        return;
      }
    }
    c.type = make_int(4, false);
    return;
  }
  if (n == "comm") {
    if (check_arity(c, 0, 0))
      c.type = make_string(16);
    return;
  }
  if (n == "signal") {
    if (!ctx_.unsafe) {
      err(c.loc) << "signal() is an unsafe function being used in safe mode";
      return;
    }
    if (!check_arity(c, 1, 1))
      return;
    if (auto *name = dyn_cast<String>(c.args[0])) {
      if (signal_number(name->value) < 0)
        err(c.loc) << name->value << " is not a valid signal";
      return;
    }
    Type t = decay(c.args[0]->type);
    if (t.is_none())
      return;
    if (!t.is_intlike()) {
      err(c.loc) << "signal only accepts string literals or integers";
      return;
    }
    check_literal_range(c, 0, kMinSignal, kMaxSignal, "signal");
    return;
  }
  if (n == "assert") {
    std::string msg;
    if (check_arity(c, 2, 2) && expect_string_literal(c, 1, msg)) {
      Type t = decay(c.args[0]->type);
      if (!t.is_none() && !t.is_intlike() && t.kind != TypeKind::Pointer)
        err(c.args[0]->loc) << "assert() expects a condition";
    }
    return;
  }
  if (n == "static_assert") {
    std::string msg;
    int64_t v;
    if (check_arity(c, 2, 2) && expect_string_literal(c, 1, msg) &&
        expect_int_literal(c, 0, v) && v == 0 && final_)
      err(c.loc) << "static_assert failed: " << msg;
    return;
  }

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
  std::vector<std::string> names = function_names();
  for (auto *f : ctx_.root->functions)
    names.push_back(f->name);
  std::string hint = did_you_mean(n, names);
  if (!hint.empty())
    d.hint(hint);
  c.type = Type{};
}

} // namespace ubtrace::ast
