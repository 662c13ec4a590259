// The syntax tree. Nodes are owned by an ASTContext (ast/context.h) and
// referenced by plain pointers; passes may replace a child by assigning the
// pointer that holds it.
#pragma once

#include "ast/builtins.h"
#include "ast/debug_types.h"
#include "ast/location.h"
#include "ast/probe_kinds.h"
#include "ast/types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::ast {

enum class NodeKind : uint8_t {
  // Expressions
  Integer,
  Boolean,
  String,
  PositionalParam, // $1
  PositionalCount, // $#
  Identifier,      // a bare name: builtin, enum value, macro, type name, ...
  Variable,        // $x
  Map,             // @x, @x[k1, k2]
  Call,            // f(args), m!(args)
  Binop,
  Unop,
  Ternary,
  FieldAccess, // e.f, e->f, e.0
  ArrayAccess, // e[i]
  Cast,        // (type)e
  Tuple,       // (a, b)
  Record,      // (x = a, y = b)
  BlockExpr,   // { stmts; e }
  Sizeof,      // sizeof(type|e)
  Offsetof,    // offsetof(type|e, f.g)
  TypeOf,      // typeof(type|e) where a value goes: a macro's argument
  // Statements
  ExprStmt,
  AssignVar, // $x = e
  AssignMap, // @x[k] = e
  VarDecl,   // let $x: T = e
  If,
  Unroll,
  While,
  For,
  Jump, // break, continue, return
  Block,
  // Top level
  AttachPoint,
  Probe,
  ConfigAssign,
  MapDecl,
  Macro,
  Subprog,
  Import,
  CDefinition,
  Program,
};

struct Node {
  Node(NodeKind k, Location l) : kind(k), loc(l) {}
  virtual ~Node() = default;
  NodeKind kind;
  Location loc;
};

struct Expr : Node {
  using Node::Node;
  Type type; // set by type resolution
};

struct Stmt : Node {
  using Node::Node;
};

template <class T> T *dyn_cast(Node *n) {
  return n && n->kind == T::Kind ? static_cast<T *>(n) : nullptr;
}
template <class T> const T *dyn_cast(const Node *n) {
  return n && n->kind == T::Kind ? static_cast<const T *>(n) : nullptr;
}
template <class T> bool isa(const Node *n) {
  return n && n->kind == T::Kind;
}

// ---- Parsed type syntax (casts, let annotations, sizeof, fn signatures) ----
struct TypeSpec {
  enum class Base : uint8_t {
    Builtin, // int8..uint64, bool, string, buffer, inet, void, ...
    Struct,  // struct NAME
    Union,   // union NAME
    Enum,    // enum NAME
    Named,   // a typedef or other identifier
    Typeof,  // typeof(expr)
  };
  // Pointer (`*`) and array (`[N]`, N = 0 when omitted) suffixes, in order.
  struct Suffix {
    bool pointer = true;
    uint64_t count = 0;
  };
  Location loc;
  Base base = Base::Builtin;
  std::string name;
  struct Expr *typeof_expr = nullptr;
  std::vector<Suffix> suffixes;
};
std::string typespec_str(const TypeSpec &t);

// ---- Expressions ----
struct Integer : Expr {
  static constexpr NodeKind Kind = NodeKind::Integer;
  Integer(Location l, uint64_t v, bool neg = false)
      : Expr(Kind, l), value(v), negative(neg) {}
  uint64_t value; // magnitude
  bool negative;  // value is -magnitude
  // Two's complement, negated in unsigned arithmetic: -2^63 (magnitude
  // 2^63) is INT64_MIN, where negating the int64_t would overflow.
  int64_t as_signed() const {
    return static_cast<int64_t>(negative ? 0 - value : value);
  }
};

struct Boolean : Expr {
  static constexpr NodeKind Kind = NodeKind::Boolean;
  Boolean(Location l, bool v) : Expr(Kind, l), value(v) {}
  bool value;
};

struct String : Expr {
  static constexpr NodeKind Kind = NodeKind::String;
  String(Location l, std::string v) : Expr(Kind, l), value(std::move(v)) {}
  std::string value;
};

struct PositionalParam : Expr {
  static constexpr NodeKind Kind = NodeKind::PositionalParam;
  PositionalParam(Location l, int n) : Expr(Kind, l), n(n) {}
  int n;
  bool as_string = false; // used through str($N): the literal text
};

struct PositionalCount : Expr {
  static constexpr NodeKind Kind = NodeKind::PositionalCount;
  explicit PositionalCount(Location l) : Expr(Kind, l) {}
};

// What a bare identifier turned out to be (set by semantic analysis).
enum class IdentKind : uint8_t {
  Unresolved,
  Builtin,   // pid, comm, arg0, ...
  EnumValue, // a constant of a C enum
  StackMode, // bpftrace, perf, raw (as a function argument)
  TimestampMode,
  TypeName, // in sizeof/offsetof
};

struct Identifier : Expr {
  static constexpr NodeKind Kind = NodeKind::Identifier;
  Identifier(Location l, std::string n) : Expr(Kind, l), name(std::move(n)) {}
  std::string name;
  IdentKind ident_kind = IdentKind::Unresolved;
  int64_t enum_value = 0;
  // IdentKind::Builtin: which one, and N of argN/sargN.
  BuiltinVar var = BuiltinVar::Pid;
  int var_index = 0;
  // A builtin whose value the probe fixes (probetype, __builtin_arch): the
  // text, set by semantic analysis.
  std::string const_text;
  // `args` in a uprobe: where each field of its record type is at the
  // function's entry, from its DWARF (ast/debug_types.h).
  std::vector<ArgPlace> arg_places;
  // `retval` of a function whose DWARF return type is an integer narrower
  // than rax: its width in bytes and signedness (only those bits count).
  uint8_t retval_size = 0;
  bool retval_signed = true;
};

struct Variable : Expr {
  static constexpr NodeKind Kind = NodeKind::Variable;
  Variable(Location l, std::string n) : Expr(Kind, l), name(std::move(n)) {}
  std::string name; // with the '$'
  // The name as written: passes that rename (a macro's own variables, loop
  // variables) append '#' and a tag, which diagnostics leave out.
  std::string shown() const { return name.substr(0, name.find('#')); }
};

struct Map : Expr {
  static constexpr NodeKind Kind = NodeKind::Map;
  Map(Location l, std::string n) : Expr(Kind, l), name(std::move(n)) {}
  std::string name; // with the '@'
  std::vector<Expr *> keys;
  bool subscripted = false; // written with [...]
  Type key_type;            // set by semantic analysis (None: scalar)
};

struct Call : Expr {
  static constexpr NodeKind Kind = NodeKind::Call;
  Call(Location l, std::string n) : Expr(Kind, l), name(std::move(n)) {}
  std::string name;
  std::vector<Expr *> args;
  bool bang = false; // name!(...) macro call syntax
  Location name_loc;
  // Resolved by semantic analysis: a builtin, or User (a script's `fn`).
  BuiltinFn fn = BuiltinFn::User;
};

enum class BinOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogAnd,
  LogOr,
};
const char *binop_str(BinOp op);
bool binop_is_comparison(BinOp op);
bool binop_is_logical(BinOp op);

struct Binop : Expr {
  static constexpr NodeKind Kind = NodeKind::Binop;
  Binop(Location l, BinOp o, Expr *a, Expr *b)
      : Expr(Kind, l), op(o), left(a), right(b) {}
  BinOp op;
  Expr *left;
  Expr *right;
};

enum class UnOp : uint8_t {
  Neg,
  LogNot,
  BitNot,
  Deref,
  AddrOf,
  PreInc,
  PreDec,
  PostInc,
  PostDec,
};
const char *unop_str(UnOp op);

struct Unop : Expr {
  static constexpr NodeKind Kind = NodeKind::Unop;
  Unop(Location l, UnOp o, Expr *e) : Expr(Kind, l), op(o), expr(e) {}
  UnOp op;
  Expr *expr;
};

struct Ternary : Expr {
  static constexpr NodeKind Kind = NodeKind::Ternary;
  Ternary(Location l, Expr *c, Expr *a, Expr *b)
      : Expr(Kind, l), cond(c), left(a), right(b) {}
  Expr *cond;
  Expr *left;
  Expr *right;
};

struct FieldAccess : Expr {
  static constexpr NodeKind Kind = NodeKind::FieldAccess;
  FieldAccess(Location l, Expr *e, std::string f, bool arrow)
      : Expr(Kind, l), expr(e), field(std::move(f)), arrow(arrow) {}
  FieldAccess(Location l, Expr *e, int idx)
      : Expr(Kind, l), expr(e), index(idx) {}
  Expr *expr;
  std::string field; // empty for tuple index access
  int index = -1;    // e.0
  bool arrow = false;
};

struct ArrayAccess : Expr {
  static constexpr NodeKind Kind = NodeKind::ArrayAccess;
  ArrayAccess(Location l, Expr *e, Expr *i)
      : Expr(Kind, l), expr(e), index(i) {}
  Expr *expr;
  Expr *index;
  int64_t tuple_index = 0; // a tuple's: the index's constant value
};

struct Cast : Expr {
  static constexpr NodeKind Kind = NodeKind::Cast;
  Cast(Location l, TypeSpec t, Expr *e)
      : Expr(Kind, l), spec(std::move(t)), expr(e) {}
  TypeSpec spec;
  Expr *expr;
};

struct Tuple : Expr {
  static constexpr NodeKind Kind = NodeKind::Tuple;
  explicit Tuple(Location l) : Expr(Kind, l) {}
  std::vector<Expr *> elems;
};

struct Record : Expr {
  static constexpr NodeKind Kind = NodeKind::Record;
  explicit Record(Location l) : Expr(Kind, l) {}
  std::vector<std::string> names;
  std::vector<Location> name_locs;
  std::vector<Expr *> elems;
};

struct Block;
struct BlockExpr : Expr {
  static constexpr NodeKind Kind = NodeKind::BlockExpr;
  BlockExpr(Location l, Block *b) : Expr(Kind, l), block(b) {}
  Block *block; // block->value is the result
};

// sizeof(TYPE) / sizeof(EXPR); offsetof(TYPE|EXPR, a.b)
struct Sizeof : Expr {
  static constexpr NodeKind Kind = NodeKind::Sizeof;
  explicit Sizeof(Location l) : Expr(Kind, l) {}
  bool has_spec = false;
  TypeSpec spec;
  Expr *expr = nullptr;
  uint64_t value = 0; // resolved
};

struct Offsetof : Expr {
  static constexpr NodeKind Kind = NodeKind::Offsetof;
  explicit Offsetof(Location l) : Expr(Kind, l) {}
  bool has_spec = false;
  TypeSpec spec;
  Expr *expr = nullptr;
  std::vector<std::string> fields;
  uint64_t value = 0; // resolved
};

// typeof(...) written where an expression goes. Only a macro's argument
// may be one: expansion puts its type where the parameter names a type
// (casts, sizeof, offsetof, declarations); anywhere else it is an error.
struct TypeOf : Expr {
  static constexpr NodeKind Kind = NodeKind::TypeOf;
  TypeOf(Location l, TypeSpec t) : Expr(Kind, l), spec(std::move(t)) {}
  TypeSpec spec;
};

// ---- Statements ----
struct ExprStmt : Stmt {
  static constexpr NodeKind Kind = NodeKind::ExprStmt;
  ExprStmt(Location l, Expr *e) : Stmt(Kind, l), expr(e) {}
  Expr *expr;
  bool discard = false; // `_ = expr;`
};

struct AssignVar : Stmt {
  static constexpr NodeKind Kind = NodeKind::AssignVar;
  AssignVar(Location l, Variable *v, Expr *e)
      : Stmt(Kind, l), var(v), value(e) {}
  Variable *var;
  Expr *value;
  bool compound = false; // written as $x op= e (value is $x op e)
};

struct AssignMap : Stmt {
  static constexpr NodeKind Kind = NodeKind::AssignMap;
  AssignMap(Location l, Map *m, Expr *e) : Stmt(Kind, l), map(m), value(e) {}
  Map *map;
  Expr *value;
  bool compound = false;
};

struct VarDecl : Stmt {
  static constexpr NodeKind Kind = NodeKind::VarDecl;
  VarDecl(Location l, Variable *v) : Stmt(Kind, l), var(v) {}
  Variable *var;
  bool has_spec = false;
  TypeSpec spec;
  Expr *init = nullptr;
};

struct Block : Stmt {
  static constexpr NodeKind Kind = NodeKind::Block;
  explicit Block(Location l) : Stmt(Kind, l) {}
  std::vector<Stmt *> stmts;
  Expr *value = nullptr; // trailing expression without ';'
};

struct If : Stmt {
  static constexpr NodeKind Kind = NodeKind::If;
  If(Location l, Expr *c, Block *t, Block *e)
      : Stmt(Kind, l), cond(c), then_block(t), else_block(e) {}
  Expr *cond;
  Block *then_block;
  Block *else_block; // may be null; `else if` is a block holding an If
};

struct Unroll : Stmt {
  static constexpr NodeKind Kind = NodeKind::Unroll;
  Unroll(Location l, Expr *n, Block *b) : Stmt(Kind, l), count(n), body(b) {}
  Expr *count;
  Block *body;
  int64_t times = 0; // resolved
};

struct While : Stmt {
  static constexpr NodeKind Kind = NodeKind::While;
  While(Location l, Expr *c, Block *b) : Stmt(Kind, l), cond(c), body(b) {}
  Expr *cond;
  Block *body;
};

// for ($kv : @map) / for ($i : start..end)
struct For : Stmt {
  static constexpr NodeKind Kind = NodeKind::For;
  For(Location l, Variable *v, Block *b) : Stmt(Kind, l), var(v), body(b) {}
  Variable *var;
  Map *map = nullptr;
  Expr *start = nullptr;
  Expr *end = nullptr;
  Block *body;
};

enum class JumpKind : uint8_t { Break, Continue, Return };
struct Jump : Stmt {
  static constexpr NodeKind Kind = NodeKind::Jump;
  Jump(Location l, JumpKind k, Expr *v = nullptr)
      : Stmt(Kind, l), jump(k), value(v) {}
  JumpKind jump;
  Expr *value;
};

// ---- Top level ----

// One attach point as written (raw) and as understood (by the attach point
// pass): provider:target:function and friends.
struct AttachPoint : Node {
  static constexpr NodeKind Kind = NodeKind::AttachPoint;
  AttachPoint(Location l, std::string r) : Node(Kind, l), raw(std::move(r)) {}
  std::string raw;
  // Set by the attach point pass from ast/probe_kinds.def; empty only for
  // an attach point the pass refused (no later pass sees one).
  std::optional<ProbeKind> kind;
  std::string target;     // binary path or library
  std::string ns;         // usdt provider
  std::string func;       // function / kernel / probe name (may be wildcard)
  std::string lang;       // "cpp" for demangled C++ names
  std::string unit;       // interval/profile unit (s, ms, us, hz)
  uint64_t freq = 0;      // interval/profile period or rate
  uint64_t period_ns = 0; // interval: the period freq and unit mean
  // software:/hardware: events counted by a perf event (ast/perf_events.h);
  // freq is the count between two samples.
  bool perf_event = false;
  uint32_t perf_type = 0;
  uint64_t perf_config = 0;
  uint64_t perf_config1 = 0, perf_config2 = 0; // watchpoint: address, length
  bool perf_in_kernel = false;                 // counted with the kernel's part
  uint64_t offset = 0;                         // FUNC+OFFSET
  uint64_t address = 0;    // BIN:ADDRESS (and BIN@FILE:LINE, resolved)
  std::string source_file; // BIN@FILE:LINE[:COL]
  uint32_t line = 0, column = 0;
  bool has_offset = false;
  bool has_address = false;
  bool wildcard = false;
  std::string name() const; // canonical name, as `probe` prints it
  // The canonical provider name ("" before the attach point pass).
  std::string_view provider() const {
    return kind ? probe_kind_name(*kind) : std::string_view();
  }
};

struct Probe : Node {
  static constexpr NodeKind Kind = NodeKind::Probe;
  explicit Probe(Location l) : Node(Kind, l) {}
  std::string label; // name=probe
  std::vector<AttachPoint *> attach_points;
  Expr *pred = nullptr;
  Block *body = nullptr;
};

struct ConfigAssign : Node {
  static constexpr NodeKind Kind = NodeKind::ConfigAssign;
  ConfigAssign(Location l, std::string k, Expr *v)
      : Node(Kind, l), key(std::move(k)), value(v) {}
  std::string key;
  Expr *value; // Integer, String, Boolean or Identifier
};

struct MapDecl : Node {
  static constexpr NodeKind Kind = NodeKind::MapDecl;
  MapDecl(Location l, std::string n, Expr *init)
      : Node(Kind, l), name(std::move(n)), init(init) {}
  std::string name; // @x
  Expr *init;       // hash(100), lruhash(10), ...
  std::string map_kind;
  uint64_t max_entries = 0;
};

struct MacroParam {
  enum class Kind : uint8_t { Variable, Map, Expr } kind;
  std::string name; // with sigil for Variable/Map
  Location loc;
};

struct Macro : Node {
  static constexpr NodeKind Kind = NodeKind::Macro;
  Macro(Location l, std::string n) : Node(Kind, l), name(std::move(n)) {}
  std::string name;
  std::vector<MacroParam> params;
  Block *body = nullptr;
};

struct SubprogParam {
  Variable *var;
  TypeSpec spec;
};

struct Subprog : Node {
  static constexpr NodeKind Kind = NodeKind::Subprog;
  Subprog(Location l, std::string n) : Node(Kind, l), name(std::move(n)) {}
  std::string name;
  std::vector<SubprogParam> params;
  TypeSpec ret;
  Block *body = nullptr;
};

struct Import : Node {
  static constexpr NodeKind Kind = NodeKind::Import;
  Import(Location l, std::string p) : Node(Kind, l), path(std::move(p)) {}
  std::string path;
};

// A C definition at the top of a script: #include/#define lines and struct,
// union, enum and typedef definitions, kept as text and parsed for casts.
struct CDefinition : Node {
  static constexpr NodeKind Kind = NodeKind::CDefinition;
  enum class Form : uint8_t { Include, Define, Definition };
  CDefinition(Location l, Form f, std::string t)
      : Node(Kind, l), form(f), text(std::move(t)) {}
  Form form;
  std::string text;
};

struct Program : Node {
  static constexpr NodeKind Kind = NodeKind::Program;
  explicit Program(Location l) : Node(Kind, l) {}
  std::vector<CDefinition *> c_definitions;
  std::vector<ConfigAssign *> config;
  bool has_config = false;
  std::vector<Import *> imports;
  std::vector<MapDecl *> map_decls;
  std::vector<Macro *> macros;
  std::vector<Subprog *> functions;
  std::vector<Probe *> probes;
};

} // namespace ubtrace::ast
