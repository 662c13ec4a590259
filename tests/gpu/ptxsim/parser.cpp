// PTX text -> ModuleImpl. One pass over the tokens of runtime/gpu's lexer:
// module variables are allocated as they are declared, registers and
// symbols are resolved to slots and offsets through a stack of scopes (PTX
// blocks shadow), labels are patched at the end of each function.
#include "runtime/gpu/ptx_lexer.h"
#include "tests/gpu/ptxsim/ir.h"
#include "tests/gpu/ptxsim/opcode.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>

namespace ubtrace::ptxsim {
namespace {

using runtime::gpu::PtxLexer;
using runtime::gpu::PtxToken;
using runtime::gpu::PtxTokenKind;

struct Binding {
  bool is_reg = true;
  uint32_t slot = 0; // register
  SymBase base = SymBase::Absolute;
  uint64_t offset = 0; // symbol: offset in its base (Absolute: the address)
  bool dynamic_shared = false; // .extern .shared x[]: offset patched at the end
};

struct RegRange {
  uint32_t base = 0;
  uint32_t count = 0;
};

struct Scope {
  std::unordered_map<std::string, Binding> names;
  std::unordered_map<std::string, RegRange> ranges;
};

// An operand as written, before it is resolved against the scopes.
struct RawOperand {
  enum class Kind { Name, Number, Address, Vector, Not, Pair, Sink } kind;
  std::string_view name;   // Name, Not, Pair (first), Address (base name)
  std::string_view second; // Pair
  std::string_view
      number; // Number, Address (absolute), with sign in `negative`
  bool negative = false;
  int64_t offset = 0;                     // Name+off, Address offset
  std::vector<std::string_view> elements; // Vector
};

struct SpecialName {
  std::string_view name;
  Special id;
};

constexpr SpecialName kSpecials[] = {
    {"%tid.x", Special::TidX},
    {"%tid.y", Special::TidY},
    {"%tid.z", Special::TidZ},
    {"%ntid.x", Special::NtidX},
    {"%ntid.y", Special::NtidY},
    {"%ntid.z", Special::NtidZ},
    {"%ctaid.x", Special::CtaidX},
    {"%ctaid.y", Special::CtaidY},
    {"%ctaid.z", Special::CtaidZ},
    {"%nctaid.x", Special::NctaidX},
    {"%nctaid.y", Special::NctaidY},
    {"%nctaid.z", Special::NctaidZ},
    {"%laneid", Special::LaneId},
    {"%warpid", Special::WarpId},
    {"%nwarpid", Special::NWarpId},
    {"%smid", Special::SmId},
    {"%nsmid", Special::NSmId},
    {"%gridid", Special::GridId},
    {"%globaltimer", Special::GlobalTimer},
    {"%globaltimer_lo", Special::GlobalTimerLo},
    {"%globaltimer_hi", Special::GlobalTimerHi},
    {"%clock", Special::Clock},
    {"%clock64", Special::Clock64},
    {"%lanemask_eq", Special::LanemaskEq},
    {"%lanemask_lt", Special::LanemaskLt},
    {"%lanemask_le", Special::LanemaskLe},
    {"%lanemask_gt", Special::LanemaskGt},
    {"%lanemask_ge", Special::LanemaskGe},
    {"%dynamic_smem_size", Special::DynamicSmemSize},
    {"%total_smem_size", Special::TotalSmemSize},
};

uint32_t align_up(uint32_t v, uint32_t a) {
  return a ? (v + a - 1) / a * a : v;
}

// A type's size in bytes for storage (pred: 1).
uint32_t type_bytes(Ty t) {
  unsigned bits = type_bits(t);
  return bits < 8 ? 1 : bits / 8;
}

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text), lex_(text) {
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n')
        newlines_.push_back(i);
  }

  Result<std::unique_ptr<ModuleImpl>> run();

private:
  // --- tokens and errors ---
  PtxToken next() { return lex_.next(); }
  PtxToken peek() { return lex_.peek(); }
  uint32_t line_of(size_t offset) const {
    return static_cast<uint32_t>(
               std::upper_bound(newlines_.begin(), newlines_.end(), offset) -
               newlines_.begin()) +
           1;
  }
  std::string_view line_text(size_t offset) const {
    size_t begin = text_.rfind('\n', offset == 0 ? 0 : offset - 1);
    begin = (begin == std::string_view::npos || offset == 0) ? 0 : begin + 1;
    size_t end = text_.find('\n', offset);
    if (end == std::string_view::npos)
      end = text_.size();
    std::string_view line = text_.substr(begin, end - begin);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
      line.remove_prefix(1);
    while (!line.empty() &&
           (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    return line;
  }
  bool fail(const PtxToken &at, std::string message) {
    if (!failed_) {
      failed_ = true;
      error_ = "line " + std::to_string(line_of(at.offset)) + ": " + message +
               ": " + std::string(line_text(at.offset));
    }
    return false;
  }
  bool expect(char punct) {
    PtxToken t = next();
    if (!t.is(punct))
      return fail(t, std::string("expected '") + punct + "'");
    return true;
  }
  void skip_line() {
    while (peek().kind != PtxTokenKind::End && !peek().starts_line)
      next();
  }
  void skip_to_semicolon() {
    while (peek().kind != PtxTokenKind::End && !peek().is(';'))
      next();
    next();
  }
  bool parse_uint(const PtxToken &t, uint64_t &out) {
    if (t.kind != PtxTokenKind::Number)
      return fail(t, "expected a number");
    std::string s(t.text);
    char *end = nullptr;
    out = std::strtoull(s.c_str(), &end, 0);
    if (*end != 0 && !(*end == 'U' && end[1] == 0))
      return fail(t, "bad number '" + s + "'");
    return true;
  }

  // --- module level ---
  bool parse_module_variable(Space space, bool is_extern);
  bool parse_declarator(Ty &type, uint32_t &align, uint32_t &vec);
  bool parse_dims(uint64_t &count, bool &unsized);
  // The names of one declaration (`[.align A] [.vN] .type a[4], b;`), each
  // handed to `declare` with its bytes (0 when unsized), up to the `;`.
  bool parse_declarations(
      const std::function<bool(const PtxToken &name, uint64_t bytes,
                               bool unsized, Ty type, uint32_t align)>
          &declare);
  // One declared name and its dimensions (`a`, `b[4]`, `c[]`), after its
  // declarator: its bytes (0 when unsized).
  bool parse_declared_name(Ty type, uint32_t vec, PtxToken &name,
                           uint64_t &bytes, bool &unsized);
  // A static .shared variable of `bytes`: its offset in the block's window.
  uint32_t place_shared(uint64_t bytes, uint32_t align);
  bool parse_initializer(GlobalVar &var, Ty type);
  bool parse_function(bool is_entry);
  bool parse_param_list(std::vector<ParamSlot> &out);
  bool parse_body(Function &fn, int32_t index);

  // --- function bodies ---
  bool parse_reg_decl(Function &fn);
  bool parse_body_variable(Function &fn, Space space);
  bool parse_instruction(Function &fn, const PtxToken &first);
  bool parse_call(Function &fn, Inst &inst, const PtxToken &at);
  bool parse_raw_operand(RawOperand &out);
  bool resolve(const RawOperand &raw, Ty type, Operand &out, const PtxToken &at,
               bool as_label = false);
  bool resolve_name(std::string_view name, int64_t offset, Operand &out,
                    const PtxToken &at);
  const Binding *lookup(std::string_view name, Binding &tmp) const;
  bool immediate(std::string_view number, bool negative, Ty type, uint64_t &out,
                 const PtxToken &at);

  std::string_view text_;
  PtxLexer lex_;
  std::vector<size_t> newlines_;
  bool failed_ = false;
  std::string error_;
  std::unique_ptr<ModuleImpl> m_ = std::make_unique<ModuleImpl>();
  std::vector<Scope> scopes_; // [0]: module scope
  // Function-local parse state.
  std::unordered_map<std::string, uint32_t> labels_;
  struct LabelFixup {
    uint32_t inst;
    std::string label;
    PtxToken at;
  };
  std::vector<LabelFixup> label_fixups_;
  int32_t current_function_ = -1;
};

Result<std::unique_ptr<ModuleImpl>> Parser::run() {
  scopes_.emplace_back();
  bool is_extern = false;
  for (;;) {
    PtxToken t = next();
    if (t.kind == PtxTokenKind::End)
      break;
    if (t.is(';'))
      continue;
    if (t.kind != PtxTokenKind::Word) {
      fail(t, "unexpected '" + std::string(t.text) + "'");
      break;
    }
    std::string_view w = t.text;
    if (w == ".version" || w == ".target" || w == ".address_size" ||
        w == ".file" || w == ".loc") {
      skip_line();
    } else if (w == ".pragma") {
      skip_to_semicolon();
    } else if (w == ".section") {
      // .section .debug_info { ... }: skipped with its brace block.
      while (peek().kind != PtxTokenKind::End && !peek().is('{'))
        next();
      int depth = 0;
      do {
        PtxToken b = next();
        if (b.kind == PtxTokenKind::End)
          break;
        if (b.is('{'))
          ++depth;
        else if (b.is('}'))
          --depth;
      } while (depth > 0);
    } else if (w == ".visible" || w == ".weak" || w == ".common") {
      continue;
    } else if (w == ".extern") {
      is_extern = true;
      continue;
    } else if (w == ".global" || w == ".const" || w == ".shared") {
      Space space = w == ".global"  ? Space::Global
                    : w == ".const" ? Space::Const
                                    : Space::Shared;
      if (!parse_module_variable(space, is_extern))
        break;
    } else if (w == ".entry" || w == ".func") {
      if (!parse_function(w == ".entry"))
        break;
    } else {
      fail(t, "unsupported directive '" + std::string(w) + "'");
      break;
    }
    is_extern = false;
  }
  if (failed_)
    return make_error(error_);
  return std::move(m_);
}

bool Parser::parse_declarator(Ty &type, uint32_t &align, uint32_t &vec) {
  type = Ty::None;
  align = 0;
  vec = 1;
  for (;;) {
    PtxToken t = peek();
    if (t.kind != PtxTokenKind::Word || t.text.empty() || t.text[0] != '.')
      break;
    next();
    std::string_view w = t.text.substr(1);
    if (w == "align") {
      uint64_t a;
      if (!parse_uint(next(), a))
        return false;
      align = static_cast<uint32_t>(a);
    } else if (w == "v2" || w == "v4") {
      vec = w == "v2" ? 2 : 4;
    } else if (w == "ptr" || w == "global" || w == "const" || w == "shared" ||
               w == "local") {
      // .param .u64 .ptr .global .align 8 p: only a hint.
    } else if (Ty ty = parse_type(w); ty != Ty::None) {
      type = ty;
    } else {
      return fail(t, "unsupported declaration modifier '" +
                         std::string(t.text) + "'");
    }
  }
  if (type == Ty::None)
    return fail(peek(), "declaration without a type");
  if (align == 0)
    align = type_bytes(type) * vec;
  return true;
}

bool Parser::parse_dims(uint64_t &count, bool &unsized) {
  count = 1;
  unsized = false;
  while (peek().is('[')) {
    next();
    if (peek().is(']')) {
      next();
      unsized = true;
      continue;
    }
    uint64_t n;
    if (!parse_uint(next(), n) || !expect(']'))
      return false;
    count *= n;
  }
  return true;
}

bool Parser::parse_declarations(
    const std::function<bool(const PtxToken &name, uint64_t bytes,
                             bool unsized, Ty type, uint32_t align)>
        &declare) {
  Ty type;
  uint32_t align, vec;
  if (!parse_declarator(type, align, vec))
    return false;
  for (;;) {
    PtxToken name;
    uint64_t bytes;
    bool unsized;
    if (!parse_declared_name(type, vec, name, bytes, unsized))
      return false;
    if (!declare(name, bytes, unsized, type, align))
      return false;
    PtxToken sep = next();
    if (sep.is(';'))
      return true;
    if (!sep.is(','))
      return fail(sep, "expected ',' or ';'");
  }
}

bool Parser::parse_declared_name(Ty type, uint32_t vec, PtxToken &name,
                                 uint64_t &bytes, bool &unsized) {
  name = next();
  if (name.kind != PtxTokenKind::Word)
    return fail(name, "expected a name");
  uint64_t count;
  if (!parse_dims(count, unsized))
    return false;
  bytes = unsized ? 0 : count * type_bytes(type) * vec;
  return true;
}

uint32_t Parser::place_shared(uint64_t bytes, uint32_t align) {
  uint32_t at = align_up(m_->shared_static_bytes, align);
  m_->shared_static_bytes = at + static_cast<uint32_t>(bytes);
  m_->shared_align = std::max(m_->shared_align, align);
  return at;
}

bool Parser::parse_module_variable(Space space, bool is_extern) {
  return parse_declarations([&](const PtxToken &name, uint64_t size,
                                bool unsized, Ty type, uint32_t align) {
    Binding b;
    b.is_reg = false;
    if (space == Space::Shared) {
      b.base = SymBase::Shared;
      if (unsized || (is_extern && size == 0)) {
        b.dynamic_shared = true; // the launch's dynamic shared memory
        b.offset = 0;
      } else {
        b.offset = place_shared(size, align);
      }
      if (peek().is('='))
        return fail(peek(), "initializer on a .shared variable");
    } else {
      auto var = std::make_unique<GlobalVar>();
      var->name = std::string(name.text);
      var->space = space;
      var->size = size;
      size_t a = std::max<size_t>(align, 16);
      var->storage.reset(new uint8_t[size + a]());
      uintptr_t p = reinterpret_cast<uintptr_t>(var->storage.get());
      var->address = reinterpret_cast<uint8_t *>((p + a - 1) / a * a);
      if (peek().is('=')) {
        next();
        if (!parse_initializer(*var, type))
          return false;
      }
      b.base = SymBase::Absolute;
      b.offset = reinterpret_cast<uintptr_t>(var->address);
      m_->global_index[var->name] = var.get();
      m_->globals.push_back(std::move(var));
    }
    scopes_[0].names[std::string(name.text)] = b;
    return true;
  });
}

bool Parser::parse_initializer(GlobalVar &var, Ty type) {
  uint32_t elem = type_bytes(type);
  size_t index = 0;
  auto store = [&](uint64_t bits, const PtxToken &at) {
    if ((index + 1) * elem > var.size)
      return fail(at, "too many initializer values");
    std::memcpy(var.address + index * elem, &bits, elem);
    ++index;
    return true;
  };
  // Values, possibly in nested braces (multi-dimensional arrays).
  int depth = 0;
  for (;;) {
    PtxToken t = next();
    if (t.is('{')) {
      ++depth;
      continue;
    }
    if (t.is('}')) {
      --depth;
    } else if (t.is(',')) {
      continue;
    } else if (t.kind == PtxTokenKind::Number ||
               (t.is('-') && peek().kind == PtxTokenKind::Number)) {
      bool negative = t.is('-');
      PtxToken num = negative ? next() : t;
      uint64_t bits;
      if (!immediate(num.text, negative, type, bits, num) || !store(bits, num))
        return false;
    } else if (t.kind == PtxTokenKind::Word) {
      // An address: sym, generic(sym), sym+off.
      std::string_view name = t.text;
      bool paren = false;
      if ((name == "generic") && peek().is('(')) {
        next();
        PtxToken inner = next();
        name = inner.text;
        paren = true;
      }
      int64_t offset = 0;
      if (paren && !expect(')'))
        return false;
      if (peek().is('+')) {
        next();
        uint64_t off;
        if (!parse_uint(next(), off))
          return false;
        offset = static_cast<int64_t>(off);
      }
      auto g = m_->global_index.find(name);
      if (g == m_->global_index.end())
        return fail(t, "unknown symbol '" + std::string(name) +
                           "' in an initializer");
      uint64_t address = reinterpret_cast<uintptr_t>(g->second->address) +
                         static_cast<uint64_t>(offset);
      if (!store(address, t))
        return false;
    } else {
      return fail(t, "bad initializer");
    }
    if (depth <= 0)
      return true;
  }
}

bool Parser::parse_param_list(std::vector<ParamSlot> &out) {
  if (!expect('('))
    return false;
  if (peek().is(')')) {
    next();
    return true;
  }
  for (;;) {
    PtxToken t = next();
    if (!t.is_word(".param"))
      return fail(t, "unsupported parameter (only .param)");
    Ty type;
    uint32_t align, vec;
    if (!parse_declarator(type, align, vec))
      return false;
    PtxToken name;
    uint64_t bytes;
    bool unsized;
    if (!parse_declared_name(type, vec, name, bytes, unsized))
      return false;
    ParamSlot p;
    p.name = std::string(name.text);
    p.size = static_cast<uint32_t>(bytes);
    p.align = align;
    out.push_back(std::move(p));
    PtxToken sep = next();
    if (sep.is(')'))
      return true;
    if (!sep.is(','))
      return fail(sep, "expected ',' or ')'");
  }
}

bool Parser::parse_function(bool is_entry) {
  std::vector<ParamSlot> rets;
  if (!is_entry && peek().is('(')) {
    if (!parse_param_list(rets))
      return false;
  }
  PtxToken name = next();
  if (name.kind != PtxTokenKind::Word)
    return fail(name, "expected a function name");
  std::vector<ParamSlot> params;
  if (peek().is('(')) {
    if (!parse_param_list(params))
      return false;
  }
  // Performance directives (.maxntid 256, 1, 1), .noreturn: no effect here.
  while (peek().kind == PtxTokenKind::Word && peek().is_directive()) {
    if (peek().text == ".pragma") {
      next();
      skip_to_semicolon();
      continue;
    }
    next();
    while (peek().kind == PtxTokenKind::Number || peek().is(','))
      next();
  }
  std::string fname(name.text);
  int32_t index;
  auto found = m_->function_index.find(fname);
  if (found == m_->function_index.end()) {
    index = static_cast<int32_t>(m_->functions.size());
    m_->functions.emplace_back();
    m_->function_index[fname] = index;
  } else {
    index = found->second;
  }
  Function &fn = m_->functions[index];
  if (fn.defined)
    return fail(name, "function '" + fname + "' defined twice");
  fn.name = fname;
  fn.is_entry = is_entry;
  fn.line = line_of(name.offset);
  fn.params = std::move(params);
  fn.rets = std::move(rets);
  uint32_t at = 0;
  for (ParamSlot &p : fn.params) {
    at = align_up(at, std::max<uint32_t>(p.align, 1));
    p.offset = at;
    at += p.size;
  }
  for (ParamSlot &p : fn.rets) {
    at = align_up(at, std::max<uint32_t>(p.align, 1));
    p.offset = at;
    at += p.size;
  }
  fn.param_bytes = at;
  fn.is_vprintf = fname == "vprintf";
  PtxToken t = next();
  if (t.is(';'))
    return true; // a prototype
  if (!t.is('{'))
    return fail(t, "expected '{' or ';' after the function signature");
  fn.defined = true;
  fn.is_vprintf = false;
  return parse_body(fn, index);
}

bool Parser::parse_body(Function &fn_ref, int32_t index) {
  current_function_ = index;
  labels_.clear();
  label_fixups_.clear();
  Scope params;
  for (const ParamSlot &p : fn_ref.params) {
    Binding b;
    b.is_reg = false;
    b.base = fn_ref.is_entry ? SymBase::EntryParam : SymBase::FrameParam;
    b.offset = p.offset;
    params.names[p.name] = b;
  }
  for (const ParamSlot &p : fn_ref.rets) {
    Binding b;
    b.is_reg = false;
    b.base = SymBase::FrameParam;
    b.offset = p.offset;
    params.names[p.name] = b;
  }
  scopes_.push_back(std::move(params));
  size_t depth = scopes_.size();
  for (;;) {
    // Functions may be appended while parsing (none are), keep a fresh ref.
    Function &fn = m_->functions[index];
    PtxToken t = next();
    if (t.kind == PtxTokenKind::End)
      return fail(t, "unterminated function body");
    if (t.is('{')) {
      scopes_.emplace_back();
      continue;
    }
    if (t.is('}')) {
      scopes_.pop_back();
      if (scopes_.size() < depth)
        break;
      continue;
    }
    if (t.is(';'))
      continue;
    if (t.kind == PtxTokenKind::Word && t.is_directive()) {
      std::string_view w = t.text;
      bool ok = true;
      if (w == ".reg")
        ok = parse_reg_decl(fn);
      else if (w == ".local")
        ok = parse_body_variable(fn, Space::Local);
      else if (w == ".shared")
        ok = parse_body_variable(fn, Space::Shared);
      else if (w == ".param")
        ok = parse_body_variable(fn, Space::Param);
      else if (w == ".pragma")
        skip_to_semicolon();
      else if (w == ".loc" || w == ".file")
        skip_line();
      else
        return fail(t, "unsupported directive '" + std::string(w) + "'");
      if (!ok)
        return false;
      continue;
    }
    if (t.kind == PtxTokenKind::Word && peek().is(':')) {
      next();
      labels_[std::string(t.text)] = static_cast<uint32_t>(fn.code.size());
      continue;
    }
    if (!parse_instruction(fn, t))
      return false;
  }
  Function &fn = m_->functions[index];
  for (const LabelFixup &f : label_fixups_) {
    auto l = labels_.find(f.label);
    if (l == labels_.end())
      return fail(f.at, "unknown label '" + f.label + "'");
    fn.code[f.inst].ops[0].value = l->second;
  }
  // Falling off the end of a body returns.
  Inst ret;
  ret.op = Op::Ret;
  ret.line = line_of(lex_.peek().offset);
  fn.code.push_back(ret);
  fn.text.emplace_back("ret; (end of function)");
  return true;
}

bool Parser::parse_reg_decl(Function &fn) {
  Ty type;
  uint32_t align, vec;
  if (!parse_declarator(type, align, vec))
    return false;
  if (vec != 1)
    return fail(peek(), "vector registers are not supported");
  for (;;) {
    PtxToken name = next();
    if (name.kind != PtxTokenKind::Word)
      return fail(name, "expected a register name");
    if (peek().is('<')) {
      next();
      uint64_t n;
      if (!parse_uint(next(), n) || !expect('>'))
        return false;
      RegRange r{fn.reg_count, static_cast<uint32_t>(n)};
      fn.reg_count += static_cast<uint32_t>(n);
      scopes_.back().ranges[std::string(name.text)] = r;
    } else {
      Binding b;
      b.is_reg = true;
      b.slot = fn.reg_count++;
      scopes_.back().names[std::string(name.text)] = b;
    }
    PtxToken sep = next();
    if (sep.is(';'))
      return true;
    if (!sep.is(','))
      return fail(sep, "expected ',' or ';'");
  }
}

bool Parser::parse_body_variable(Function &fn, Space space) {
  return parse_declarations([&](const PtxToken &name, uint64_t size,
                                bool unsized, Ty, uint32_t align) {
    Binding b;
    b.is_reg = false;
    switch (space) {
    case Space::Local:
      b.base = SymBase::Local;
      b.offset = align_up(fn.local_bytes, align);
      fn.local_bytes = static_cast<uint32_t>(b.offset + size);
      fn.local_align = std::max(fn.local_align, align);
      break;
    case Space::Param:
      b.base = SymBase::CallParam;
      b.offset = align_up(fn.callparam_bytes, std::max<uint32_t>(align, 8));
      fn.callparam_bytes = static_cast<uint32_t>(b.offset + size);
      break;
    case Space::Shared:
      b.base = SymBase::Shared;
      if (unsized)
        b.dynamic_shared = true;
      else
        b.offset = place_shared(size, align);
      break;
    case Space::Generic:
    case Space::Global:
    case Space::Const:
      return fail(name, "unsupported variable space in a function body");
    }
    scopes_.back().names[std::string(name.text)] = b;
    return true;
  });
}

const Binding *Parser::lookup(std::string_view name, Binding &tmp) const {
  std::string key(name);
  size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9')
    --digits;
  for (size_t i = scopes_.size(); i-- > 0;) {
    const Scope &s = scopes_[i];
    auto n = s.names.find(key);
    if (n != s.names.end())
      return &n->second;
    if (digits < name.size() && digits > 0) {
      auto r = s.ranges.find(std::string(name.substr(0, digits)));
      if (r != s.ranges.end()) {
        uint64_t idx = std::strtoull(std::string(name.substr(digits)).c_str(),
                                     nullptr, 10);
        if (idx < r->second.count) {
          tmp = Binding{};
          tmp.is_reg = true;
          tmp.slot = r->second.base + static_cast<uint32_t>(idx);
          return &tmp;
        }
      }
    }
  }
  return nullptr;
}

bool Parser::immediate(std::string_view number, bool negative, Ty type,
                       uint64_t &out, const PtxToken &at) {
  std::string s(number);
  bool is_f32_bits =
      s.size() == 10 && (s[1] == 'f' || s[1] == 'F') && s[0] == '0';
  bool is_f64_bits =
      s.size() == 18 && (s[1] == 'd' || s[1] == 'D') && s[0] == '0';
  bool want_float = type_float(type);
  if (is_f32_bits || is_f64_bits) {
    uint64_t bits = std::strtoull(s.c_str() + 2, nullptr, 16);
    double value = is_f32_bits ? static_cast<double>(std::bit_cast<float>(
                                     static_cast<uint32_t>(bits)))
                               : std::bit_cast<double>(bits);
    if (negative)
      value = -value;
    if (type == Ty::F64)
      out = std::bit_cast<uint64_t>(value);
    else if (type == Ty::F32 || !want_float)
      out = is_f32_bits && !negative
                ? bits
                : std::bit_cast<uint32_t>(static_cast<float>(value));
    else
      return fail(at, "unsupported floating-point immediate type");
    return true;
  }
  bool is_hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  bool looks_float = !is_hex && (s.find('.') != std::string::npos ||
                                 s.find('e') != std::string::npos ||
                                 s.find('E') != std::string::npos);
  if (looks_float) {
    char *end = nullptr;
    double value = std::strtod(s.c_str(), &end);
    if (*end != 0)
      return fail(at, "bad number '" + s + "'");
    if (negative)
      value = -value;
    if (type == Ty::F32)
      out = std::bit_cast<uint32_t>(static_cast<float>(value));
    else
      out = std::bit_cast<uint64_t>(value);
    return true;
  }
  uint64_t value;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    value = std::strtoull(s.c_str() + 2, nullptr, 2);
  } else {
    char *end = nullptr;
    value = std::strtoull(s.c_str(), &end, 0);
    if (*end != 0 && !(*end == 'U' && end[1] == 0))
      return fail(at, "bad number '" + s + "'");
  }
  if (negative)
    value = ~value + 1;
  if (type == Ty::F32)
    out = std::bit_cast<uint32_t>(
        static_cast<float>(static_cast<int64_t>(value)));
  else if (type == Ty::F64)
    out = std::bit_cast<uint64_t>(
        static_cast<double>(static_cast<int64_t>(value)));
  else
    out = value;
  return true;
}

bool Parser::parse_raw_operand(RawOperand &out) {
  PtxToken t = next();
  out = RawOperand{};
  if (t.is('[')) {
    out.kind = RawOperand::Kind::Address;
    PtxToken base = next();
    if (base.kind == PtxTokenKind::Word) {
      out.name = base.text;
    } else if (base.kind == PtxTokenKind::Number) {
      out.number = base.text;
    } else {
      return fail(base, "bad address");
    }
    while (peek().is('+') || peek().is('-')) {
      bool minus = next().is('-');
      if (peek().is('-')) {
        next();
        minus = !minus;
      }
      uint64_t off;
      if (!parse_uint(next(), off))
        return false;
      out.offset +=
          minus ? -static_cast<int64_t>(off) : static_cast<int64_t>(off);
    }
    return expect(']');
  }
  if (t.is('{')) {
    out.kind = RawOperand::Kind::Vector;
    for (;;) {
      PtxToken e = next();
      if (e.kind != PtxTokenKind::Word)
        return fail(e, "bad vector operand");
      out.elements.push_back(e.text);
      PtxToken sep = next();
      if (sep.is('}'))
        return true;
      if (!sep.is(','))
        return fail(sep, "expected ',' or '}'");
    }
  }
  if (t.is('!')) {
    PtxToken n = next();
    if (n.kind != PtxTokenKind::Word)
      return fail(n, "expected a predicate after '!'");
    out.kind = RawOperand::Kind::Not;
    out.name = n.text;
    return true;
  }
  if (t.is('-') || t.kind == PtxTokenKind::Number) {
    out.kind = RawOperand::Kind::Number;
    out.negative = t.is('-');
    PtxToken n = out.negative ? next() : t;
    if (n.kind != PtxTokenKind::Number)
      return fail(n, "expected a number");
    out.number = n.text;
    return true;
  }
  if (t.kind != PtxTokenKind::Word)
    return fail(t, "bad operand '" + std::string(t.text) + "'");
  if (t.text == "_") {
    out.kind = RawOperand::Kind::Sink;
    return true;
  }
  out.kind = RawOperand::Kind::Name;
  out.name = t.text;
  if (peek().is('|')) {
    next();
    PtxToken q = next();
    if (q.kind != PtxTokenKind::Word)
      return fail(q, "expected a register after '|'");
    out.kind = RawOperand::Kind::Pair;
    out.second = q.text;
    return true;
  }
  while (peek().is('+')) {
    next();
    bool minus = false;
    if (peek().is('-')) {
      next();
      minus = true;
    }
    uint64_t off;
    if (!parse_uint(next(), off))
      return false;
    out.offset +=
        minus ? -static_cast<int64_t>(off) : static_cast<int64_t>(off);
  }
  return true;
}

bool Parser::resolve_name(std::string_view name, int64_t offset, Operand &out,
                          const PtxToken &at) {
  Binding tmp;
  if (const Binding *b = lookup(name, tmp)) {
    if (b->is_reg) {
      out.kind = OpndKind::Reg;
      out.index = b->slot;
      out.value = static_cast<uint64_t>(offset);
      return true;
    }
    out.kind = OpndKind::Sym;
    out.base = b->base;
    out.value = b->offset + static_cast<uint64_t>(offset);
    if (b->dynamic_shared)
      out.base = SymBase::DynamicShared;
    return true;
  }
  for (const SpecialName &s : kSpecials)
    if (s.name == name) {
      out.kind = OpndKind::Special;
      out.index = static_cast<uint32_t>(s.id);
      return true;
    }
  return fail(at, "unknown symbol '" + std::string(name) + "'");
}

bool Parser::resolve(const RawOperand &raw, Ty type, Operand &out,
                     const PtxToken &at, bool as_label) {
  out = Operand{};
  switch (raw.kind) {
  case RawOperand::Kind::Sink:
    out.kind = OpndKind::Reg;
    out.index = 0;
    return true;
  case RawOperand::Kind::Number:
    out.kind = OpndKind::Imm;
    return immediate(raw.number, raw.negative, type, out.value, at);
  case RawOperand::Kind::Not:
    if (!resolve_name(raw.name, 0, out, at))
      return false;
    if (out.kind != OpndKind::Reg)
      return fail(at, "'!' on something other than a predicate");
    out.kind = OpndKind::RegNot;
    return true;
  case RawOperand::Kind::Name:
    if (as_label) {
      out.kind = OpndKind::Label;
      return true;
    }
    return resolve_name(raw.name, raw.offset, out, at);
  case RawOperand::Kind::Address:
    if (!raw.number.empty()) {
      out.kind = OpndKind::Imm;
      uint64_t v;
      if (!immediate(raw.number, false, Ty::U64, v, at))
        return false;
      out.value = v + static_cast<uint64_t>(raw.offset);
      return true;
    }
    return resolve_name(raw.name, raw.offset, out, at);
  case RawOperand::Kind::Vector: {
    Function &fn = m_->functions[current_function_];
    // value: the first entry in vec_regs, and the count above bit 32.
    out.kind = OpndKind::Vec;
    out.value = fn.vec_regs.size() | (uint64_t(raw.elements.size()) << 32);
    for (std::string_view e : raw.elements) {
      Operand r;
      if (e == "_") {
        r.kind = OpndKind::Reg;
        r.index = 0;
      } else if (!resolve_name(e, 0, r, at)) {
        return false;
      }
      if (r.kind != OpndKind::Reg)
        return fail(at, "vector elements must be registers");
      fn.vec_regs.push_back(r.index);
    }
    return true;
  }
  case RawOperand::Kind::Pair:
    return fail(at, "unexpected '|' operand");
  }
  return false;
}

bool Parser::parse_call(Function &fn, Inst &inst, const PtxToken &at) {
  CallSite call;
  std::vector<RawOperand> rets, args;
  auto list = [&](std::vector<RawOperand> &into) {
    if (!expect('('))
      return false;
    if (peek().is(')')) {
      next();
      return true;
    }
    for (;;) {
      RawOperand r;
      if (!parse_raw_operand(r))
        return false;
      into.push_back(r);
      PtxToken sep = next();
      if (sep.is(')'))
        return true;
      if (!sep.is(','))
        return fail(sep, "expected ',' or ')'");
    }
  };
  if (peek().is('(')) {
    if (!list(rets) || !expect(','))
      return false;
  }
  PtxToken target = next();
  if (target.kind != PtxTokenKind::Word)
    return fail(target, "expected a function name");
  auto found = m_->function_index.find(target.text);
  if (found == m_->function_index.end())
    return fail(target, "call to undeclared function '" +
                            std::string(target.text) + "'");
  call.callee = found->second;
  if (peek().is(',')) {
    next();
    if (!list(args))
      return false;
  }
  if (peek().is(','))
    return fail(peek(), "indirect calls (prototypes) are not supported");
  if (!expect(';'))
    return false;
  for (const RawOperand &r : rets) {
    Operand o;
    if (!resolve(r, Ty::B64, o, at))
      return false;
    call.rets.push_back(o);
  }
  for (const RawOperand &r : args) {
    Operand o;
    if (!resolve(r, Ty::B64, o, at))
      return false;
    call.args.push_back(o);
  }
  inst.extra = static_cast<uint32_t>(fn.calls.size());
  fn.calls.push_back(std::move(call));
  return true;
}

bool Parser::parse_instruction(Function &fn, const PtxToken &first) {
  Inst inst;
  PtxToken opcode = first;
  if (first.is('@')) {
    bool negate = false;
    if (peek().is('!')) {
      next();
      negate = true;
    }
    PtxToken pred = next();
    Operand g;
    if (!resolve_name(pred.text, 0, g, pred))
      return false;
    if (g.kind != OpndKind::Reg)
      return fail(pred, "a guard must be a predicate register");
    inst.guard = static_cast<int32_t>(g.index);
    inst.guard_not = negate;
    opcode = next();
  }
  if (opcode.kind != PtxTokenKind::Word)
    return fail(opcode, "expected an instruction");
  inst.line = line_of(first.offset);
  std::string why;
  bool is_call = false;
  if (!decode_opcode(opcode.text, inst, is_call, why))
    return fail(opcode, why);
  std::vector<RawOperand> raws;
  size_t end_offset;
  if (is_call) {
    if (!parse_call(fn, inst, first))
      return false;
    end_offset = lex_.peek().offset;
  } else {
    if (!peek().is(';')) {
      for (;;) {
        RawOperand r;
        if (!parse_raw_operand(r))
          return false;
        raws.push_back(r);
        PtxToken sep = next();
        if (sep.is(';'))
          break;
        if (!sep.is(','))
          return fail(sep, "expected ',' or ';'");
      }
    } else {
      next();
    }
    end_offset = lex_.peek().offset;
  }
  // Resolve operands by role.
  auto want = [&](size_t n) {
    if (raws.size() != n)
      return fail(opcode, "expected " + std::to_string(n) + " operands");
    return true;
  };
  auto res = [&](size_t i, size_t slot, Ty type) {
    return resolve(raws[i], type, inst.ops[slot], first);
  };
  auto dual = [&](size_t i, Ty type) {
    // d or d|p: the second destination goes to ops[5].
    if (raws[i].kind == RawOperand::Kind::Pair) {
      RawOperand a = raws[i], b = raws[i];
      a.kind = RawOperand::Kind::Name;
      b.kind = RawOperand::Kind::Name;
      b.name = raws[i].second;
      inst.flags |= kFlagDualDest;
      return resolve(a, type, inst.ops[0], first) &&
             resolve(b, Ty::Pred, inst.ops[5], first);
    }
    return res(i, 0, type);
  };
  Ty t = inst.type;
  bool ok = true;
  switch (inst.op) {
  case Op::Mov:
    ok = want(2) && res(0, 0, t) && res(1, 1, t);
    if (ok && inst.ops[1].kind == OpndKind::Vec &&
        inst.ops[0].kind == OpndKind::Vec)
      return fail(opcode, "mov between two vectors");
    if (ok && (inst.ops[0].kind == OpndKind::Vec ||
               inst.ops[1].kind == OpndKind::Vec)) {
      const Operand &v =
          inst.ops[0].kind == OpndKind::Vec ? inst.ops[0] : inst.ops[1];
      uint64_t count = v.value >> 32;
      if ((count != 2 && count != 4) || type_bits(t) % count != 0 ||
          type_bits(t) / count < 8)
        return fail(opcode, "unsupported vector mov");
    }
    break;
  case Op::Abs:
  case Op::Neg:
  case Op::Not:
  case Op::Cnot:
  case Op::Popc:
  case Op::Clz:
  case Op::Brev:
  case Op::Bfind:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Rcp:
  case Op::Ex2:
  case Op::Lg2:
  case Op::Sin:
  case Op::Cos:
  case Op::Tanh:
  case Op::Cvta:
    ok = want(2) && res(0, 0, t) && res(1, 1, t);
    break;
  case Op::Testp:
    ok = want(2) && res(0, 0, Ty::Pred) && res(1, 1, t);
    break;
  case Op::Cvt:
    ok = want(2) && res(0, 0, t) && res(1, 1, inst.type2);
    break;
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::Rem:
  case Op::Min:
  case Op::Max:
  case Op::And:
  case Op::Or:
  case Op::Xor:
  case Op::Copysign:
    ok = want(3) && res(0, 0, t) && res(1, 1, t) && res(2, 2, t);
    break;
  case Op::Shl:
  case Op::Shr:
    ok = want(3) && res(0, 0, t) && res(1, 1, t) && res(2, 2, Ty::U32);
    break;
  case Op::Mad:
  case Op::Fma:
    ok =
        want(4) && res(0, 0, t) && res(1, 1, t) && res(2, 2, t) && res(3, 3, t);
    break;
  case Op::Bfe:
    ok = want(4) && res(0, 0, t) && res(1, 1, t) && res(2, 2, Ty::U32) &&
         res(3, 3, Ty::U32);
    break;
  case Op::Bfi:
    ok = want(5) && res(0, 0, t) && res(1, 1, t) && res(2, 2, t) &&
         res(3, 3, Ty::U32) && res(4, 4, Ty::U32);
    break;
  case Op::Prmt:
  case Op::Shf:
    ok = want(4) && res(0, 0, t) && res(1, 1, t) && res(2, 2, t) &&
         res(3, 3, Ty::U32);
    break;
  case Op::Setp:
    if (raws.size() != 3 && raws.size() != 4)
      return fail(opcode, "expected 3 or 4 operands");
    if (static_cast<BoolOp>(inst.sub2) == BoolOp::None && raws.size() == 4)
      return fail(opcode, "a fourth setp operand needs .and/.or/.xor");
    ok = dual(0, Ty::Pred) && res(1, 1, t) && res(2, 2, t) &&
         (raws.size() == 3 || res(3, 3, Ty::Pred));
    break;
  case Op::Selp:
    ok = want(4) && res(0, 0, t) && res(1, 1, t) && res(2, 2, t) &&
         res(3, 3, Ty::Pred);
    break;
  case Op::Slct:
    ok = want(4) && res(0, 0, t) && res(1, 1, t) && res(2, 2, t) &&
         res(3, 3, inst.type2);
    break;
  case Op::Ld:
    ok = want(2) && res(0, 0, t) && res(1, 1, Ty::U64);
    if (ok && raws[1].kind != RawOperand::Kind::Address)
      return fail(opcode, "expected an address operand");
    break;
  case Op::St:
    ok = want(2) && res(0, 1, Ty::U64) && res(1, 2, t);
    if (ok && raws[0].kind != RawOperand::Kind::Address)
      return fail(opcode, "expected an address operand");
    break;
  case Op::Atom:
    if (raws.size() != 3 && raws.size() != 4)
      return fail(opcode, "expected 3 or 4 operands");
    if ((raws.size() == 4) != (static_cast<AtomOp>(inst.sub) == AtomOp::Cas))
      return fail(opcode, "atom.cas takes 4 operands, other atomics 3");
    ok = res(0, 0, t) && res(1, 1, Ty::U64) && res(2, 2, t) &&
         (raws.size() == 3 || res(3, 3, t));
    break;
  case Op::Red:
    ok = want(2) && res(0, 1, Ty::U64) && res(1, 2, t);
    break;
  case Op::Bra:
    ok = want(1) && resolve(raws[0], t, inst.ops[0], first, true);
    if (ok)
      label_fixups_.push_back({static_cast<uint32_t>(fn.code.size()),
                               std::string(raws[0].name), first});
    break;
  case Op::Call:
    break;
  case Op::Ret:
  case Op::Exit:
  case Op::Trap:
  case Op::Membar:
    ok = want(0);
    break;
  case Op::Nop:
    break; // prefetch [a]: nothing to resolve
  case Op::BarSync:
    if (raws.empty() || raws.size() > 2)
      return fail(opcode, "expected 1 or 2 operands");
    ok = res(0, 1, Ty::U32) && (raws.size() == 1 || res(1, 2, Ty::U32));
    break;
  case Op::Nanosleep:
    ok = want(1) && res(0, 1, Ty::U32);
    break;
  case Op::Activemask:
    ok = want(1) && res(0, 0, Ty::B32);
    break;
  case Op::MatchAny:
    ok = want(3) && res(0, 0, Ty::B32) && res(1, 1, t) && res(2, 2, Ty::B32);
    break;
  case Op::MatchAll:
    ok = want(3) && dual(0, Ty::B32) && res(1, 1, t) && res(2, 2, Ty::B32);
    break;
  case Op::Shfl:
    ok = want(5) && dual(0, t) && res(1, 1, t) && res(2, 2, Ty::U32) &&
         res(3, 3, Ty::U32) && res(4, 4, Ty::B32);
    break;
  case Op::Vote:
    ok = want(3) && res(0, 0, t) && res(1, 1, Ty::Pred) && res(2, 2, Ty::B32);
    break;
  case Op::Redux:
    ok = want(3) && res(0, 0, t) && res(1, 1, t) && res(2, 2, Ty::B32);
    break;
  case Op::BarWarpSync:
    ok = want(1) && res(0, 1, Ty::B32);
    break;
  }
  if (!ok)
    return false;
  // Destinations must be registers (or vectors of them for ld).
  switch (inst.op) {
  case Op::St:
  case Op::Red:
  case Op::Bra:
  case Op::Call:
  case Op::Ret:
  case Op::Exit:
  case Op::Trap:
  case Op::Membar:
  case Op::Nop:
  case Op::BarSync:
  case Op::Nanosleep:
  case Op::BarWarpSync:
    break;
  default:
    if (inst.ops[0].kind != OpndKind::Reg &&
        !(inst.ops[0].kind == OpndKind::Vec &&
          (inst.op == Op::Ld || inst.op == Op::Mov)))
      return fail(opcode, "the destination must be a register");
  }
  if ((inst.op == Op::Ld || inst.op == Op::St) && inst.vec > 1) {
    const Operand &v = inst.ops[inst.op == Op::Ld ? 0 : 2];
    if (v.kind != OpndKind::Vec || (v.value >> 32) != inst.vec)
      return fail(opcode, "vector width and operand do not match");
  }
  fn.code.push_back(inst);
  // The instruction's text, up to its ';' (no trailing comment).
  size_t begin = first.offset;
  size_t semicolon = text_.find(';', begin);
  if (semicolon != std::string_view::npos && semicolon < end_offset)
    end_offset = semicolon + 1;
  std::string_view txt = text_.substr(begin, end_offset - begin);
  while (!txt.empty() && (txt.back() == ' ' || txt.back() == '\n' ||
                          txt.back() == '\t' || txt.back() == '\r'))
    txt.remove_suffix(1);
  std::string flat(txt);
  for (char &c : flat)
    if (c == '\n' || c == '\t')
      c = ' ';
  fn.text.push_back(std::move(flat));
  return true;
}

} // namespace

Result<std::unique_ptr<ModuleImpl>> parse_module(std::string_view ptx) {
  Parser parser(ptx);
  return parser.run();
}

} // namespace ubtrace::ptxsim
