#include "ast/printer.h"

#include "ast/visitor.h"

#include <cstdio>
#include <string>

namespace ubtrace::ast {

const char *binop_str(BinOp op) {
  switch (op) {
  case BinOp::Add:
    return "+";
  case BinOp::Sub:
    return "-";
  case BinOp::Mul:
    return "*";
  case BinOp::Div:
    return "/";
  case BinOp::Mod:
    return "%";
  case BinOp::BitAnd:
    return "&";
  case BinOp::BitOr:
    return "|";
  case BinOp::BitXor:
    return "^";
  case BinOp::Shl:
    return "<<";
  case BinOp::Shr:
    return ">>";
  case BinOp::Eq:
    return "==";
  case BinOp::Ne:
    return "!=";
  case BinOp::Lt:
    return "<";
  case BinOp::Le:
    return "<=";
  case BinOp::Gt:
    return ">";
  case BinOp::Ge:
    return ">=";
  case BinOp::LogAnd:
    return "&&";
  case BinOp::LogOr:
    return "||";
  }
  return "?";
}

bool binop_is_comparison(BinOp op) {
  switch (op) {
  case BinOp::Eq:
  case BinOp::Ne:
  case BinOp::Lt:
  case BinOp::Le:
  case BinOp::Gt:
  case BinOp::Ge:
    return true;
  case BinOp::Add:
  case BinOp::Sub:
  case BinOp::Mul:
  case BinOp::Div:
  case BinOp::Mod:
  case BinOp::BitAnd:
  case BinOp::BitOr:
  case BinOp::BitXor:
  case BinOp::Shl:
  case BinOp::Shr:
  case BinOp::LogAnd:
  case BinOp::LogOr:
    return false;
  }
  return false;
}

bool binop_is_logical(BinOp op) {
  return op == BinOp::LogAnd || op == BinOp::LogOr;
}

const char *unop_str(UnOp op) {
  switch (op) {
  case UnOp::Neg:
    return "-";
  case UnOp::LogNot:
    return "!";
  case UnOp::BitNot:
    return "~";
  case UnOp::Deref:
    return "*";
  case UnOp::AddrOf:
    return "&";
  case UnOp::PreInc:
    return "++ (pre)";
  case UnOp::PreDec:
    return "-- (pre)";
  case UnOp::PostInc:
    return "++ (post)";
  case UnOp::PostDec:
    return "-- (post)";
  }
  return "?";
}

std::string typespec_str(const TypeSpec &t) {
  std::string s;
  switch (t.base) {
  case TypeSpec::Base::Builtin:
  case TypeSpec::Base::Named:
    s = t.name;
    break;
  case TypeSpec::Base::Struct:
    s = "struct " + t.name;
    break;
  case TypeSpec::Base::Union:
    s = "union " + t.name;
    break;
  case TypeSpec::Base::Enum:
    s = "enum " + t.name;
    break;
  case TypeSpec::Base::Typeof:
    s = "typeof(...)";
    break;
  }
  for (const auto &x : t.suffixes)
    s +=
        x.pointer ? " *" : "[" + (x.count ? std::to_string(x.count) : "") + "]";
  return s;
}

std::string AttachPoint::name() const {
  if (!kind)
    return raw;
  std::string n(provider());
  switch (*kind) {
  case ProbeKind::Begin:
  case ProbeKind::End:
    return n;
  case ProbeKind::Interval:
  case ProbeKind::Profile:
    return n + ":" + unit + ":" + std::to_string(freq);
  case ProbeKind::Software:
  case ProbeKind::Hardware:
    return n + ":" + target + ":" + std::to_string(freq);
  case ProbeKind::Watchpoint:
  case ProbeKind::AsyncWatchpoint: {
    char hex[24];
    snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)perf_config1);
    return n + ":" + hex + ":" + unit + ":" + func;
  }
  case ProbeKind::Self:
  case ProbeKind::Tracepoint:
    return n + ":" + target + ":" + func;
  case ProbeKind::Bench:
  case ProbeKind::Test:
    return n + ":" + target;
  case ProbeKind::Uprobe:
  case ProbeKind::Uretprobe:
  case ProbeKind::Usdt:
  case ProbeKind::GpuKernel:
  case ProbeKind::GpuKernelRet:
    n += ":" + target;
    break;
#define UBT_PROBE_KIND(id, name, alias, backend, set) UBT_CASE_IF_##backend(id)
#include "ast/probe_kinds.def"
#undef UBT_PROBE_KIND
    // Never given to an attach point: the pass refuses them.
    if (!target.empty())
      n += ":" + target;
    break;
  }
  if (!ns.empty())
    n += ":" + ns;
  if (has_address)
    return n + ":" + std::to_string(address);
  n += ":" + func;
  if (has_offset)
    n += "+" + std::to_string(offset);
  return n;
}

namespace {

class Printer : public Visitor<Printer> {
public:
  Printer(std::ostream &out, bool types) : out_(out), types_(types) {}
  using Visitor::visit;

  void line(const std::string &text, const Expr *e = nullptr) {
    out_ << std::string(depth_, ' ') << text;
    if (types_ && e)
      out_ << " :: [" << type_str(e->type) << "]";
    out_ << "\n";
  }
  template <class F> void nested(F &&f) {
    depth_++;
    f();
    depth_--;
  }

  void visit(Integer &i) {
    line("int: " + std::string(i.negative ? "-" : "") + std::to_string(i.value),
         &i);
  }
  void visit(Boolean &b) {
    line(std::string("bool: ") + (b.value ? "true" : "false"), &b);
  }
  void visit(String &s) { line("string: " + s.value, &s); }
  void visit(PositionalParam &p) { line("param: $" + std::to_string(p.n), &p); }
  void visit(PositionalCount &p) { line("param: $#", &p); }
  void visit(Identifier &i) { line("identifier: " + i.name, &i); }
  void visit(Variable &v) { line("variable: " + v.name, &v); }
  void visit(Map &m) {
    line("map: " + m.name, &m);
    nested([&] { Visitor::visit(m); });
  }
  void visit(Call &c) {
    line("call: " + c.name + (c.bang ? "!" : ""), &c);
    nested([&] { Visitor::visit(c); });
  }
  void visit(Binop &b) {
    line(binop_str(b.op), &b);
    nested([&] { Visitor::visit(b); });
  }
  void visit(Unop &u) {
    line(unop_str(u.op), &u);
    nested([&] { Visitor::visit(u); });
  }
  void visit(Ternary &t) {
    line("?:", &t);
    nested([&] { Visitor::visit(t); });
  }
  void visit(FieldAccess &f) {
    line(f.index >= 0 ? "." + std::to_string(f.index)
                      : (f.arrow ? "->" : ".") + f.field,
         &f);
    nested([&] { Visitor::visit(f); });
  }
  void visit(ArrayAccess &a) {
    line("[]", &a);
    nested([&] { Visitor::visit(a); });
  }
  void visit(Cast &c) {
    line("(" + typespec_str(c.spec) + ")", &c);
    nested([&] { Visitor::visit(c); });
  }
  void visit(Tuple &t) {
    line("tuple:", &t);
    nested([&] { Visitor::visit(t); });
  }
  void visit(Record &r) {
    line("record:", &r);
    nested([&] {
      for (size_t i = 0; i < r.elems.size(); i++) {
        line(r.names[i] + " =");
        nested([&] { visit(r.elems[i]); });
      }
    });
  }
  void visit(BlockExpr &b) {
    line("block expression", &b);
    nested([&] { Visitor::visit(b); });
  }
  void visit(Sizeof &s) {
    line("sizeof" + (s.has_spec ? ": " + typespec_str(s.spec) : ""), &s);
    nested([&] { Visitor::visit(s); });
  }
  void visit(TypeOf &t) {
    line("typeof: " + typespec_str(t.spec), &t);
    nested([&] { Visitor::visit(t); });
  }
  void visit(Offsetof &o) {
    std::string path;
    for (const auto &f : o.fields)
      path += (path.empty() ? "" : ".") + f;
    line("offsetof" + (o.has_spec ? ": " + typespec_str(o.spec) : "") + ", " +
             path,
         &o);
    nested([&] { Visitor::visit(o); });
  }
  void visit(ExprStmt &s) {
    if (s.discard) {
      line("_ =");
      nested([&] { Visitor::visit(s); });
      return;
    }
    Visitor::visit(s);
  }
  void visit(AssignVar &s) {
    line("=");
    nested([&] {
      visit(*s.var);
      visit(s.value);
    });
  }
  void visit(AssignMap &s) {
    line("=");
    nested([&] {
      visit(*s.map);
      visit(s.value);
    });
  }
  void visit(VarDecl &s) {
    line("let " + s.var->name +
         (s.has_spec ? ": " + typespec_str(s.spec) : ""));
    nested([&] { visit(s.init); });
  }
  void visit(If &s) {
    line("if");
    nested([&] {
      visit(s.cond);
      line("then");
      nested([&] { visit(*s.then_block); });
      if (s.else_block) {
        line("else");
        nested([&] { visit(*s.else_block); });
      }
    });
  }
  void visit(Unroll &s) {
    line("unroll");
    nested([&] { Visitor::visit(s); });
  }
  void visit(While &s) {
    line("while");
    nested([&] { Visitor::visit(s); });
  }
  void visit(For &s) {
    line("for " + s.var->name);
    nested([&] {
      if (s.map)
        visit(*s.map);
      visit(s.start);
      visit(s.end);
      line("body");
      nested([&] { visit(*s.body); });
    });
  }
  void visit(Jump &s) {
    line(s.jump == JumpKind::Break      ? "break"
         : s.jump == JumpKind::Continue ? "continue"
                                        : "return");
    nested([&] { Visitor::visit(s); });
  }
  void visit(Block &b) {
    for (auto &s : b.stmts)
      visit(s);
    if (b.value) {
      line("value");
      nested([&] { visit(b.value); });
    }
  }
  void visit(Probe &p) {
    for (auto *ap : p.attach_points)
      line(ap->name());
    nested([&] {
      if (p.pred) {
        line("predicate");
        nested([&] { visit(p.pred); });
      }
      visit(*p.body);
    });
  }
  void visit(ConfigAssign &c) {
    line("config " + c.key + " =");
    nested([&] { visit(c.value); });
  }
  void visit(MapDecl &m) {
    line("let " + m.name + " =");
    nested([&] { visit(m.init); });
  }
  void visit(Subprog &s) {
    std::string sig = "fn " + s.name + "(";
    for (size_t i = 0; i < s.params.size(); i++)
      sig += (i ? ", " : "") + s.params[i].var->name + ": " +
             typespec_str(s.params[i].spec);
    line(sig + "): " + typespec_str(s.ret));
    nested([&] { visit(*s.body); });
  }
  void visit(Import &i) { line("import " + i.path); }
  void visit(CDefinition &c) { line("C definition: " + c.text); }
  void visit(Program &p) {
    line("Program");
    nested([&] {
      Visitor::visit(p);
      for (auto *m : p.macros) {
        std::string sig = "macro " + m->name + "(";
        for (size_t i = 0; i < m->params.size(); i++)
          sig += (i ? ", " : "") + m->params[i].name;
        line(sig + ")");
        nested([&] { visit(*m->body); });
      }
    });
  }

private:
  std::ostream &out_;
  bool types_;
  int depth_ = 0;
};

} // namespace

void print_ast(std::ostream &out, Program &program, bool with_types) {
  Printer p(out, with_types);
  p.visit(program);
}

} // namespace ubtrace::ast
