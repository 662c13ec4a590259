// Semantic analysis of stacks, symbols, registers, addresses, process
// identity, signals and assertions.
#include "ast/builtins.h"
#include "ast/passes/semantic_internal.h"
#include "ast/signals.h"
#include "ast/suggest.h"

namespace ubtrace::ast {

void Semantic::check_exit(Call &c) {
  // A process's exit status is 8 bits: exit(256) would exit 0.
  if (check_arity(c) && c.args.size() == 1 && expect_int_arg(c, 0))
    check_literal_range(c, 0, 0, 255, "exit code");
  return;
}

bool Semantic::check_unstable(Call &c, runtime::FeatureFlag flag,
                              const char *feature, const char *config_name,
                              bool &warned) {
  switch (flag) {
  case runtime::FeatureFlag::Error:
    err(c.loc) << feature << " feature is not enabled by default. To enable "
               << "this unstable feature, set the config flag to enable. "
               << config_name << "=enable";
    return false;
  case runtime::FeatureFlag::Warn:
    if (final_ && !warned) {
      warn(Location{}) << "Script is using an unstable feature: " << feature
                       << ". To prevent this warning you must explicitly "
                       << "enable it in the config e.g. " << config_name
                       << "=enable";
      warned = true;
    }
    return true;
  case runtime::FeatureFlag::Enable:
    return true;
  }
  return true;
}

void Semantic::check_stack(Call &c) {
  const std::string &n = c.name;
  if (!check_arity(c))
    return;
  if (c.fn == BuiltinFn::DwUstack) {
    ctx_.dw_ustack = true;
    if (!check_unstable(c, ctx_.config.unstable_dw_ustack, "dw_ustack",
                        "unstable_dw_ustack", warned_dw_ustack_))
      return;
  }
  uint8_t mode = stack_mode_;
  int64_t limit = 127;
  for (size_t i = 0; i < c.args.size(); i++) {
    if (auto *id = dyn_cast<Identifier>(c.args[i]);
        id && id->ident_kind == IdentKind::StackMode) {
      if (i != 0) {
        err(c.args[i]->loc) << n << "(): the stack mode comes first";
        return;
      }
      mode = id->name == "bpftrace" ? 0
             : id->name == "perf"   ? 1
             : id->name == "raw"    ? 2
                                    : 3; // build_id
      continue;
    }
    if (!expect_int_literal(c, i, limit))
      return;
    if (limit < 0 || limit > 1024) {
      err(c.args[i]->loc) << n << "(): the stack limit must be 0..1024";
      return;
    }
  }
  c.type = make_simple(
      c.fn == BuiltinFn::Kstack ? TypeKind::KStack : TypeKind::UStack, 0);
  c.type.stack_mode = mode;
  c.type.stack_limit = static_cast<uint32_t>(limit);
  // nr, frames, and for user stacks the pid (symbolised later by pid).
  c.type.size =
      static_cast<uint32_t>(8 * (limit + (c.fn == BuiltinFn::Kstack ? 1 : 2)));
  return;
}

void Semantic::check_sym(Call &c) {
  const std::string &n = c.name;
  if (check_arity(c) && (decay(c.args[0]->type).is_intlike() ||
                         c.args[0]->type.kind == TypeKind::Pointer))
    c.type =
        make_simple(c.fn == BuiltinFn::Usym ? TypeKind::USym : TypeKind::KSym,
                    c.fn == BuiltinFn::Usym ? 16 : 8);
  else if (c.args.size() == 1)
    err(c.loc) << n << "() expects an integer or pointer argument";
  return;
}

void Semantic::check_addr(Call &c) {
  std::string sym;
  if (check_arity(c) && expect_string_literal(c, 0, sym))
    c.type = c.fn == BuiltinFn::Uaddr ? make_pointer(make_int(8, false))
                                      : make_int(8, false);
  return;
}

void Semantic::check_reg(Call &c) {
  std::string r;
  if (!check_arity(c) || !expect_string_literal(c, 0, r))
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
  c.type = make_int(8, false);
  return;
}

void Semantic::check_ntop(Call &c) {
  if (!check_arity(c))
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

void Semantic::check_pton(Call &c) {
  std::string addr;
  if (!check_arity(c) || !expect_string_literal(c, 0, addr))
    return;
  bool v6 = addr.find(':') != std::string::npos;
  c.type = make_array(make_int(1, false), v6 ? 16 : 4);
  return;
}

void Semantic::check_macaddr(Call &c) {
  if (check_arity(c))
    c.type = make_simple(TypeKind::MacAddr, 6);
  return;
}

void Semantic::check_cgroupid(Call &c) {
  std::string path;
  if (check_arity(c) && expect_string_literal(c, 0, path))
    c.type = make_int(8, false);
  return;
}

void Semantic::check_bswap(Call &c) {
  if (!check_arity(c) || !expect_int_arg(c, 0))
    return;
  c.type = decay(c.args[0]->type);
  if (c.type.kind == TypeKind::Boolean)
    c.type = make_int(1, false);
  c.type.name.clear();
  return;
}

void Semantic::check_ptr(Call &c) {
  if (check_arity(c))
    c.type = c.args[0]->type;
  return;
}

void Semantic::check_nsecs(Call &c) {
  if (!check_arity(c))
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

void Semantic::check_pid_tid(Call &c) {
  const std::string &n = c.name;
  if (!check_arity(c))
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

void Semantic::check_comm(Call &c) {
  if (check_arity(c))
    c.type = make_string(16);
  return;
}

void Semantic::check_signal(Call &c) {
  if (!check_arity(c))
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

// write_user(dst, src, len): len bytes of a value the probe holds (a
// string, an array, a record, buf()'s bytes) written at dst in the traced
// process; true when all were.
void Semantic::check_write_user(Call &c) {
  if (!check_arity(c))
    return;
  c.type = make_bool();
  Type dst = decay(c.args[0]->type), src = c.args[1]->type,
       len = decay(c.args[2]->type);
  if (!dst.is_none() && !dst.is_intlike() && dst.kind != TypeKind::Pointer)
    err(c.args[0]->loc) << "write_user() writes at an address: expected a "
                           "pointer or an integer, found "
                        << type_str(dst);
  if (!src.is_none() && src.kind != TypeKind::String &&
      src.kind != TypeKind::Array && src.kind != TypeKind::Record &&
      src.kind != TypeKind::Buffer)
    err(c.args[1]->loc) << "write_user() writes the bytes of a value the "
                           "probe holds (a string, an array, a record or "
                           "buf()), found "
                        << type_str(src)
                        << "; read memory into one first (str(), buf())";
  if (!len.is_none() && !len.is_intlike())
    err(c.args[2]->loc) << "write_user() expects a length, found "
                        << type_str(len);
}

void Semantic::check_assert(Call &c) {
  std::string msg;
  if (check_arity(c) && expect_string_literal(c, 1, msg)) {
    Type t = decay(c.args[0]->type);
    if (!t.is_none() && !t.is_intlike() && t.kind != TypeKind::Pointer)
      err(c.args[0]->loc) << "assert() expects a condition";
  }
  return;
}

void Semantic::check_static_assert(Call &c) {
  std::string msg;
  int64_t v;
  if (check_arity(c) && expect_string_literal(c, 1, msg) &&
      expect_int_literal(c, 0, v) && v == 0 && final_)
    err(c.loc) << "static_assert failed: " << msg;
  return;
}

} // namespace ubtrace::ast
