// The semantic analyser: type resolution and checks, split by node family
// over semantic_{exprs,calls,stmts}.cpp. Private to ast/passes.
//
// Map types are learnt from every use in the program, so the analysis runs
// to a fixed point (a map read in one probe may be assigned in a later one);
// diagnostics are kept only from the final run.
#pragma once

#include "ast/context.h"
#include "ast/visitor.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ubtrace::ast {

struct VarInfo {
  Type type;
  Location loc;
  bool declared = false;        // `let`, possibly without a value yet
  bool annotated = false;       // `let $x: T`: the type is fixed
  const void *origin = nullptr; // the node that made it (joined_vars_ key)
};

class Semantic : public Visitor<Semantic> {
public:
  explicit Semantic(ASTContext &ctx);
  bool run();

  using Visitor::visit;
  void visit(Expr *&e);         // #define substitution, then dispatch
  void visit(ConfigAssign &) {} // checked by the config pass
  // expressions (semantic_exprs.cpp)
  void visit(Integer &e);
  void visit(Boolean &e);
  void visit(String &e);
  void visit(PositionalParam &e);
  void visit(PositionalCount &e);
  void visit(Identifier &e);
  void visit(Variable &e);
  void visit(Map &e);
  void visit(Binop &e);
  void bad_operands(Binop &e, const Type &l, const Type &r);
  void visit(Unop &e);
  void visit(Ternary &e);
  void visit(FieldAccess &e);
  void visit(ArrayAccess &e);
  void visit(Cast &e);
  void visit(Tuple &e);
  void visit(Record &e);
  void visit(BlockExpr &e);
  void visit(Sizeof &e);
  void visit(Offsetof &e);
  void visit(TypeOf &e);
  // `probe` where a string is wanted: its name, read from the probe-names
  // map at run time (a cast to string[kProbeNameSize]).
  void probe_as_text(Expr *&e);
  // calls: resolution and the dispatch by builtin (semantic_calls.cpp),
  // then one check per builtin (or family), in files by family
  void visit(Call &e);
  void check_call(Call &e);
  void check_user_call(Call &c);
  // semantic_calls_format.cpp
  void check_format(Call &c); // printf, errorf, system, cat, ...
  // semantic_calls_maps.cpp
  void check_aggregation(Call &c);
  void check_print(Call &c);
  void check_clear_zero(Call &c);
  void check_delete(Call &c);
  void check_has_key(Call &c);
  void check_len(Call &c);
  // semantic_calls_strings.cpp
  void expect_string_args(Call &c, size_t n);
  void check_time(Call &c);
  void check_strftime(Call &c);
  void check_str(Call &c);
  void check_buf(Call &c);
  void check_join(Call &c);
  void check_strncmp(Call &c);
  void check_strcontains(Call &c);
  void check_strlen(Call &c);
  void check_strerror(Call &c);
  // semantic_calls_system.cpp
  void check_exit(Call &c);
  void check_stack(Call &c);
  void check_sym(Call &c);
  void check_addr(Call &c);
  void check_reg(Call &c);
  void check_ntop(Call &c);
  void check_pton(Call &c);
  void check_macaddr(Call &c);
  void check_cgroupid(Call &c);
  void check_bswap(Call &c);
  void check_ptr(Call &c);
  void check_nsecs(Call &c);
  void check_pid_tid(Call &c);
  void check_comm(Call &c);
  void check_signal(Call &c);
  void check_write_user(Call &c);
  void check_assert(Call &c);
  void check_static_assert(Call &c);
  // builtin variables (semantic_exprs.cpp)
  Type builtin_var_type(Identifier &e);
  std::vector<const AttachPoint *> uprobe_points() const;
  Type args_type(Identifier &e);
  Type syscall_args_type(Identifier &e);
  // Adds a type the script names but does not define from the uprobes'
  // binaries' DWARF (ast/debug_types.h); false when none has it.
  bool import_debug_type(const std::string &name);
  void narrow_retval(Identifier &e);
  void check_tseries(Call &c);
  bool warned_tseries_ = false;
  bool warned_dw_ustack_ = false;
  // An unstable feature's config flag: an error (false) or a warning once.
  bool check_unstable(Call &c, runtime::FeatureFlag flag, const char *feature,
                      const char *config_name, bool &warned);
  std::string probetype_text(const Identifier &e);
  // statements (semantic_stmts.cpp)
  void visit(ExprStmt &s);
  void visit(AssignVar &s);
  void visit(AssignMap &s);
  void visit(VarDecl &s);
  void visit(If &s);
  void visit(Unroll &s);
  void visit(While &s);
  void visit(For &s);
  void visit(Jump &s);
  void visit(Block &b);
  void visit(Probe &p);
  void visit(Subprog &f);
  void visit(MapDecl &m);

  // ---- shared helpers ----
  DiagBuilder err(const Location &loc);
  size_t error_count() const {
    return (final_ ? ctx_.diags() : sink_).error_count();
  }
  DiagBuilder warn(const Location &loc);

  // The integer an aggregation map reads as; other types unchanged.
  static Type decay(const Type &t);
  // Integer literal (possibly negated or cast) value, if `e` is one.
  bool literal_int(const Expr *e, int64_t &out) const;
  // The type a TypeSpec names (reports unknown types).
  Type resolve_spec(TypeSpec &spec, bool allow_unsized_array = false);

  // Variables
  VarInfo *find_var(const std::string &name);
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() { scopes_.pop_back(); }
  void assign_var(Variable &v, const Type &t, const Location &loc,
                  bool is_decl);

  // Maps
  MapInfo &map_info(const std::string &name, const Location &loc);
  void check_map_keys(Map &m);
  // A whole map as an argument (clear(@m), for ($kv : @m), ...).
  MapInfo &whole_map(Map &m);
  // A C struct whose definition was not known when the type was built
  // (struct Foo { struct Foo *next; }) completed from the C definitions.
  Type complete(const Type &t) const;
  void update_map_value(Map &m, const Type &t, const Location &loc);

  // Calls
  bool check_arity(Call &c, size_t min, size_t max);
  bool expect_map_arg(Call &c, size_t i, bool allow_keys = false);
  bool expect_int_arg(Call &c, size_t i);
  bool expect_string_literal(Call &c, size_t i, std::string &out);
  bool expect_int_literal(Call &c, size_t i, int64_t &out);
  // A literal integer argument outside [lo, hi] is a located error,
  // "<value> is not a valid <what>, allowed range: [lo,hi]" (bpftrace's
  // words for signal()); false then. Other arguments pass.
  bool check_literal_range(Call &c, size_t i, int64_t lo, int64_t hi,
                           const char *what);
  // Arity as the function's row in ast/builtins.def says.
  bool check_arity(Call &c) {
    const BuiltinFnInfo &row = builtin_fn_info(c.fn);
    return check_arity(c, row.min_args, row.max_args);
  }
  bool gpu_probe() const;
  bool in_probe_set(unsigned set) const { return (probe_set_ & ~set) == 0; }
  std::string probe_kinds() const;

  ASTContext &ctx_;
  bool final_ = false;
  bool changed_ = false;
  Diagnostics sink_;
  unsigned probe_set_ = 0;
  Probe *probe_ = nullptr;
  Subprog *func_ = nullptr;
  int loop_depth_ = 0;
  bool in_map_assign_ = false; // visiting the value of `@m = <call>`
  std::vector<std::map<std::string, VarInfo>> scopes_;
  // A variable's type joined over all its assignments in the last pass,
  // by the node that made it: the next pass starts from it, so that every
  // use sees the type all the assignments need ($x = 1; $x = 1000: int16).
  std::map<const void *, Type> joined_vars_;
  Type joined_var_type(const void *origin, const Type &t) const;
  void join_var(VarInfo &info, const Type &t);
  std::set<std::string> read_maps_;
  // The parameters `args` leaves out in the current probe, with why.
  std::map<std::string, std::string> args_unreadable_;
  std::map<std::string, bool> map_keyed_; // shape of each map's first use
  uint32_t max_strlen_ = 0;               // config max_strlen (the constructor)
  uint8_t stack_mode_ =
      0; // config stack_mode: 0 bpftrace, 1 perf, 2 raw, 3 build_id
};

// A type's kind in words ("integer", "string", ...), for messages.
const char *kind_name(const Type &t);
// The x86-64 register names reg() takes.
const std::set<std::string> &x86_registers();

} // namespace ubtrace::ast
