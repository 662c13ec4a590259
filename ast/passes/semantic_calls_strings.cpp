// Semantic analysis of the string, buffer and time-format functions.
#include "ast/builtins.h"
#include "ast/passes/semantic_internal.h"

#include <algorithm>

namespace ubtrace::ast {

void Semantic::check_time(Call &c) {
  std::string fmt;
  if (check_arity(c) && c.args.size() == 1)
    expect_string_literal(c, 0, fmt);
  return;
}

void Semantic::check_strftime(Call &c) {
  std::string fmt;
  if (!check_arity(c) || !expect_string_literal(c, 0, fmt) ||
      !expect_int_arg(c, 1))
    return;
  c.type = make_simple(TypeKind::Timestamp, 16);
  return;
}

void Semantic::check_str(Call &c) {
  if (!check_arity(c))
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

void Semantic::check_buf(Call &c) {
  if (!check_arity(c))
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

void Semantic::check_join(Call &c) {
  if (!check_arity(c))
    return;
  Type t = decay(c.args[0]->type);
  if (!t.is_none() && !t.is_intlike() && t.kind != TypeKind::Pointer)
    err(c.loc) << "join() expects a pointer to an array of strings";
  std::string sep;
  if (c.args.size() == 2)
    expect_string_literal(c, 1, sep);
  return;
}

// The first n arguments are strings, or an error per one that is not.
void Semantic::expect_string_args(Call &c, size_t n) {
  for (size_t i = 0; i < n; i++) {
    probe_as_text(c.args[i]);
    Type t = c.args[i]->type;
    if (!t.is_none() && t.kind != TypeKind::String)
      err(c.loc) << c.name << "() expects string arguments (" << kind_name(t)
                 << " provided)";
  }
}

void Semantic::probe_as_text(Expr *&e) {
  if (e->type.kind != TypeKind::ProbeName)
    return;
  TypeSpec spec;
  spec.loc = e->loc;
  spec.base = TypeSpec::Base::Builtin;
  spec.name = "string";
  auto *cast = ctx_.make<Cast>(e->loc, spec, e);
  cast->type = make_string(kProbeTextSize);
  e = cast;
  ctx_.probe_text = true;
}

void Semantic::check_strncmp(Call &c) {
  if (!check_arity(c))
    return;
  expect_string_args(c, 2);
  int64_t len;
  if (expect_int_literal(c, 2, len) && len < 0)
    err(c.args[2]->loc) << "strncmp() length must be >= 0";
  c.type = make_int(8, true);
  return;
}

void Semantic::check_strcontains(Call &c) {
  if (!check_arity(c))
    return;
  expect_string_args(c, 2);
  c.type = make_bool();
  return;
}

void Semantic::check_strlen(Call &c) {
  if (!check_arity(c))
    return;
  Type t = c.args[0]->type;
  if (!t.is_none() && t.kind != TypeKind::String)
    err(c.loc) << "strlen() expects a string argument (" << kind_name(t)
               << " provided)";
  c.type = make_int(8, false);
  return;
}

void Semantic::check_strerror(Call &c) {
  // They print their text at the CLI: an errno's, a signal's, a system
  // call's.
  if (check_arity(c) && expect_int_arg(c, 0))
    c.type =
        make_simple(c.fn == BuiltinFn::SignalName    ? TypeKind::SignalName
                    : c.fn == BuiltinFn::SyscallName ? TypeKind::SyscallName
                                                     : TypeKind::StrError,
                    8);
  return;
}

} // namespace ubtrace::ast
