#include "ast/passes/c_definitions.h"

#include "ast/builtins.h"

#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

namespace ubtrace::ast {

Type c_base_type(const std::string &words) {
  // Normalise "unsigned long int" and friends to a sorted word count.
  std::istringstream in(words);
  std::string w;
  int n_long = 0, n_unsigned = 0, n_signed = 0, n_short = 0, n_char = 0,
      n_int = 0, other = 0;
  std::string single;
  while (in >> w) {
    if (w == "long")
      n_long++;
    else if (w == "unsigned")
      n_unsigned++;
    else if (w == "signed")
      n_signed++;
    else if (w == "short")
      n_short++;
    else if (w == "char")
      n_char++;
    else if (w == "int")
      n_int++;
    else if (w == "const" || w == "volatile" || w == "restrict")
      continue;
    else {
      other++;
      single = w;
    }
  }
  if (other == 1 && !n_long && !n_unsigned && !n_signed && !n_short &&
      !n_char && !n_int) {
    static const std::map<std::string, Type> named = {
        {"int8", make_int(1, true)},
        {"uint8", make_int(1, false)},
        {"int16", make_int(2, true)},
        {"uint16", make_int(2, false)},
        {"int32", make_int(4, true)},
        {"uint32", make_int(4, false)},
        {"int64", make_int(8, true)},
        {"uint64", make_int(8, false)},
        {"int8_t", make_int(1, true)},
        {"uint8_t", make_int(1, false)},
        {"int16_t", make_int(2, true)},
        {"uint16_t", make_int(2, false)},
        {"int32_t", make_int(4, true)},
        {"uint32_t", make_int(4, false)},
        {"int64_t", make_int(8, true)},
        {"uint64_t", make_int(8, false)},
        {"__s8", make_int(1, true)},
        {"__u8", make_int(1, false)},
        {"__s16", make_int(2, true)},
        {"__u16", make_int(2, false)},
        {"__s32", make_int(4, true)},
        {"__u32", make_int(4, false)},
        {"__s64", make_int(8, true)},
        {"__u64", make_int(8, false)},
        {"s8", make_int(1, true)},
        {"u8", make_int(1, false)},
        {"s16", make_int(2, true)},
        {"u16", make_int(2, false)},
        {"s32", make_int(4, true)},
        {"u32", make_int(4, false)},
        {"s64", make_int(8, true)},
        {"u64", make_int(8, false)},
        {"size_t", make_int(8, false)},
        {"ssize_t", make_int(8, true)},
        {"uintptr_t", make_int(8, false)},
        {"intptr_t", make_int(8, true)},
        {"ptrdiff_t", make_int(8, true)},
        {"off_t", make_int(8, true)},
        {"pid_t", make_int(4, true)},
        {"uid_t", make_int(4, false)},
        {"gid_t", make_int(4, false)},
        {"time_t", make_int(8, true)},
        {"_Bool", make_bool()},
        {"bool", make_bool()},
        // Floating point has no values here: printed null, as bpftrace.
        {"float", make_simple(TypeKind::Float, 4)},
        {"double", make_simple(TypeKind::Float, 8)},
        {"void", make_void()},
    };
    auto it = named.find(single);
    return it == named.end() ? Type{} : it->second;
  }
  if (other)
    return Type{};
  bool is_signed = n_unsigned == 0;
  if (n_char)
    return make_int(1, is_signed);
  if (n_short)
    return make_int(2, is_signed);
  if (n_long)
    return make_int(8, is_signed);
  if (n_int || n_unsigned || n_signed)
    return make_int(4, is_signed);
  return Type{};
}

namespace {

struct Token {
  enum Kind { Ident, Number, Punct, End } kind;
  std::string text;
  uint64_t value = 0;
};

class CParser {
public:
  CParser(const std::string &text, const Location &loc, CTypes &types,
          Diagnostics &diags, bool quiet = false)
      : loc_(loc), types_(types), diags_(diags), quiet_(quiet) {
    tokenize(text);
  }

  // The whole text as one constant expression, or nullopt.
  std::optional<int64_t> constant() {
    int64_t v = const_expr();
    if (!ok_ || peek().kind != Token::End)
      return std::nullopt;
    return v;
  }

  bool parse_all() {
    while (peek().kind != Token::End && ok_) {
      if (accept(";"))
        continue;
      parse_definition();
    }
    return ok_;
  }

private:
  Location loc_;
  CTypes &types_;
  Diagnostics &diags_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  bool quiet_ = false; // evaluating a header's macro: no diagnostics
  bool ok_ = true;
  int anon_ = 0;

  void tokenize(const std::string &s) {
    size_t i = 0;
    while (i < s.size()) {
      char c = s[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        i++;
      } else if (s.compare(i, 2, "//") == 0) {
        while (i < s.size() && s[i] != '\n')
          i++;
      } else if (s.compare(i, 2, "/*") == 0) {
        size_t e = s.find("*/", i + 2);
        i = e == std::string::npos ? s.size() : e + 2;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i;
        while (j < s.size() &&
               (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_'))
          j++;
        toks_.push_back({Token::Ident, s.substr(i, j - i)});
        i = j;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t j = i;
        while (j < s.size() && std::isalnum(static_cast<unsigned char>(s[j])))
          j++;
        std::string num = s.substr(i, j - i);
        while (!num.empty() && std::strchr("uUlL", num.back()))
          num.pop_back();
        Token t{Token::Number, s.substr(i, j - i)};
        t.value = std::strtoull(num.c_str(), nullptr, 0);
        toks_.push_back(t);
        i = j;
      } else {
        if (s.compare(i, 2, "<<") == 0 || s.compare(i, 2, ">>") == 0) {
          toks_.push_back({Token::Punct, s.substr(i, 2)});
          i += 2;
        } else {
          toks_.push_back({Token::Punct, std::string(1, c)});
          i++;
        }
      }
    }
    toks_.push_back({Token::End, ""});
  }

  const Token &peek(size_t k = 0) const {
    return toks_[std::min(pos_ + k, toks_.size() - 1)];
  }
  bool accept(const char *punct) {
    if (peek().kind == Token::Punct && peek().text == punct) {
      pos_++;
      return true;
    }
    return false;
  }
  bool accept_word(const char *w) {
    if (peek().kind == Token::Ident && peek().text == w) {
      pos_++;
      return true;
    }
    return false;
  }
  void fail(const std::string &msg) {
    if (ok_ && !quiet_)
      diags_.error(loc_) << "C definition: " << msg;
    ok_ = false;
  }
  void expect(const char *punct) {
    if (!accept(punct))
      fail(std::string("expected '") + punct + "' but found '" + peek().text +
           "'");
  }

  static bool is_qualifier(const std::string &w) {
    return w == "const" || w == "volatile" || w == "restrict" ||
           w == "static" || w == "extern" || w == "__restrict";
  }
  static bool is_int_word(const std::string &w) {
    return w == "unsigned" || w == "signed" || w == "short" || w == "long" ||
           w == "int" || w == "char";
  }

  // A constant expression (array sizes, enum values, bitfield widths):
  // integers, enum constants, #defines, + - * / << >> | & and parentheses.
  int64_t const_expr() { return const_binary(0); }
  int64_t const_unary() {
    if (accept("-"))
      return -const_unary();
    if (accept("~"))
      return ~const_unary();
    if (accept("(")) {
      int64_t v = const_expr();
      expect(")");
      return v;
    }
    const Token &t = peek();
    if (t.kind == Token::Number) {
      pos_++;
      return static_cast<int64_t>(t.value);
    }
    if (t.kind == Token::Ident) {
      pos_++;
      if (auto it = types_.enum_values.find(t.text);
          it != types_.enum_values.end())
        return it->second.second;
      if (auto it = types_.defines.find(t.text); it != types_.defines.end()) {
        const std::string &v = it->second;
        char *end = nullptr;
        long long n = std::strtoll(v.c_str(), &end, 0);
        if (v.empty() || !end || *end != '\0')
          fail("'" + t.text + "' is not an integer constant");
        return n;
      }
      fail("unknown constant '" + t.text + "'");
      return 0;
    }
    fail("expected a constant but found '" + t.text + "'");
    return 0;
  }
  int64_t const_binary(int min_prec) {
    int64_t lhs = const_unary();
    for (;;) {
      const Token &t = peek();
      static const std::map<std::string, int> prec = {
          {"|", 1}, {"^", 2}, {"&", 3}, {"<<", 4}, {">>", 4},
          {"+", 5}, {"-", 5}, {"*", 6}, {"/", 6},  {"%", 6}};
      if (t.kind != Token::Punct || !prec.count(t.text))
        return lhs;
      int p = prec.at(t.text);
      if (p < min_prec)
        return lhs;
      std::string op = t.text;
      pos_++;
      int64_t rhs = const_binary(p + 1);
      if (op == "|")
        lhs |= rhs;
      else if (op == "^")
        lhs ^= rhs;
      else if (op == "&")
        lhs &= rhs;
      else if (op == "<<")
        lhs <<= rhs;
      else if (op == ">>")
        lhs >>= rhs;
      else if (op == "+")
        lhs += rhs;
      else if (op == "-")
        lhs -= rhs;
      else if (op == "*")
        lhs *= rhs;
      else if (op == "/")
        lhs = rhs ? lhs / rhs : 0;
      else if (op == "%")
        lhs = rhs ? lhs % rhs : 0;
    }
  }

  // The base type of a declaration (no declarator).
  // Whether the last base_type() was plain `char`: arrays of it are
  // strings, arrays of signed or unsigned char are byte arrays.
  bool plain_char_ = false;

  Type base_type() {
    plain_char_ = false;
    while (peek().kind == Token::Ident && is_qualifier(peek().text))
      pos_++;
    if (accept_word("struct"))
      return record_type(false);
    if (accept_word("union"))
      return record_type(true);
    if (accept_word("enum"))
      return enum_type();
    std::string words;
    while (peek().kind == Token::Ident &&
           (is_int_word(peek().text) || is_qualifier(peek().text))) {
      words += peek().text + " ";
      pos_++;
    }
    if (!words.empty()) {
      std::istringstream in(words);
      std::string w, kept;
      while (in >> w)
        if (!is_qualifier(w))
          kept += (kept.empty() ? "" : " ") + w;
      plain_char_ = kept == "char";
      return c_base_type(words);
    }
    if (peek().kind != Token::Ident) {
      fail("expected a type but found '" + peek().text + "'");
      return Type{};
    }
    std::string name = peek().text;
    pos_++;
    if (auto it = types_.typedefs.find(name); it != types_.typedefs.end())
      return it->second;
    Type t = c_base_type(name);
    if (t.is_none())
      fail("unknown type '" + name + "'");
    return t;
  }

  Type record_type(bool is_union) {
    std::string name;
    if (peek().kind == Token::Ident) {
      name = peek().text;
      pos_++;
    }
    std::string full =
        std::string(is_union ? "union " : "struct ") +
        (name.empty() ? "(anonymous " + std::to_string(++anon_) + ")" : name);
    if (!accept("{")) {
      // A reference to a (maybe not yet defined) record.
      if (auto it = types_.records.find(full); it != types_.records.end())
        return it->second;
      Type t = make_simple(TypeKind::CStruct, 0);
      t.name = full;
      t.is_union = is_union;
      return t;
    }
    Type rec = make_simple(TypeKind::CStruct, 0);
    rec.name = full;
    rec.is_union = is_union;
    // Register early so that members can point to the record itself.
    types_.records[full] = rec;
    // The members first, then the attributes after the braces (packed,
    // aligned), then the layout they make.
    struct Member {
      Type type;
      std::string name;
      int64_t width = -1;       // a bitfield's, -1 for none
      bool anon_nested = false; // struct { ... }; merges its fields
    };
    std::vector<Member> members;
    while (ok_ && !accept("}")) {
      if (peek().kind == Token::End) {
        fail("unterminated " + full);
        break;
      }
      Type base = base_type();
      bool plain_char = plain_char_;
      if (!ok_)
        break;
      if (accept(";") || peek().text == "}") {
        // Anonymous nested struct/union: its fields join this record.
        if (base.kind == TypeKind::CStruct &&
            base.name.find("(anonymous") != std::string::npos)
          members.push_back({base, "", -1, true});
        continue;
      }
      do {
        Member m;
        m.type = declarator(base, plain_char, m.name);
        if (!ok_)
          break;
        if (accept(":"))
          m.width = const_expr();
        members.push_back(std::move(m));
      } while (accept(","));
      // The last member's ';' may be left out, as bpftrace accepts.
      if (peek().text != "}")
        expect(";");
    }
    bool packed = false;
    uint64_t min_align = 1;
    attributes(packed, min_align);

    // The x86-64 System V layout. `used` is the end of the data so far in
    // bits, so that bitfields can pack into the bytes before them; packed
    // members align to a byte and bitfields may straddle.
    auto round_up = [](uint64_t v, uint64_t to) {
      return (v + to - 1) / to * to;
    };
    uint64_t used = 0, size = 0;
    uint64_t align = min_align;
    for (const Member &m : members) {
      const Type &ft = m.type;
      uint64_t a = packed ? 1 : type_alignment(ft);
      if (m.anon_nested) {
        uint64_t at = is_union ? 0 : round_up(round_up(used, 8) / 8, a);
        for (auto f : ft.fields) {
          f.offset += static_cast<uint32_t>(at);
          rec.fields.push_back(f);
        }
        align = std::max(align, a);
        if (!is_union)
          used = (at + ft.size) * 8;
        size = std::max(size, at + ft.size);
        continue;
      }
      if (m.width >= 0) {
        uint64_t width = static_cast<uint64_t>(m.width);
        uint64_t unit = std::max<uint64_t>(8, 8ull * ft.size);
        if (width == 0) {
          // `int : 0` closes the storage unit.
          if (!is_union)
            used = round_up(used, unit);
          continue;
        }
        // A bitfield goes at the next free bit unless it would straddle
        // a boundary of its type's size; then at the next boundary.
        uint64_t start = is_union ? 0 : used;
        if (!packed && start / unit != (start + width - 1) / unit)
          start = round_up(start, unit);
        if (!is_union)
          used = start + width;
        size = std::max(size, round_up(start + width, 8) / 8);
        if (m.name.empty())
          continue; // unnamed: padding only
        align = std::max(align, a);
        Field f;
        f.name = m.name;
        // The word read holds the whole field: from its first byte when
        // packed, else from the start of its storage unit.
        uint64_t base_bit = packed ? start / 8 * 8 : start / unit * unit;
        f.offset = static_cast<uint32_t>(base_bit / 8);
        f.bitfield_shift = static_cast<uint32_t>(start - base_bit);
        f.bitfield_bits = static_cast<uint32_t>(width);
        f.type = std::make_shared<const Type>(ft);
        rec.fields.push_back(std::move(f));
        continue;
      }
      align = std::max(align, a);
      Field f;
      f.name = m.name;
      uint64_t off = is_union ? 0 : round_up(round_up(used, 8) / 8, a);
      f.offset = static_cast<uint32_t>(off);
      if (!is_union)
        used = (off + ft.size) * 8;
      size = std::max(size, off + ft.size);
      f.type = std::make_shared<const Type>(ft);
      rec.fields.push_back(std::move(f));
    }
    rec.size = static_cast<uint32_t>(
        round_up(std::max(size, round_up(used, 8) / 8), align));
    if (packed || min_align > 1)
      rec.align = static_cast<uint32_t>(align);
    types_.records[full] = rec;
    return rec;
  }

  // __attribute__((packed)), __attribute__((aligned(N))), several, in any
  // order, after a record's braces; other attributes change no layout and
  // are skipped.
  void attributes(bool &packed, uint64_t &min_align) {
    while (ok_ && accept_word("__attribute__")) {
      expect("(");
      expect("(");
      while (ok_ && !accept(")")) {
        if (peek().kind == Token::End) {
          fail("unterminated __attribute__");
          return;
        }
        if (accept(","))
          continue;
        std::string word = peek().text;
        pos_++;
        if (word == "packed" || word == "__packed__") {
          packed = true;
        } else if (word == "aligned" || word == "__aligned__") {
          uint64_t n = 16; // aligned without a value: the largest
          if (accept("(")) {
            n = static_cast<uint64_t>(const_expr());
            expect(")");
          }
          min_align = std::max(min_align, n);
        } else if (accept("(")) {
          for (int depth = 1; ok_ && depth > 0 && peek().kind != Token::End;
               pos_++)
            depth += peek().text == "(" ? 1 : peek().text == ")" ? -1 : 0;
        }
      }
      expect(")");
    }
  }

  Type enum_type() {
    std::string name;
    if (peek().kind == Token::Ident) {
      name = peek().text;
      pos_++;
    }
    std::string full = name.empty()
                           ? "(anonymous enum " + std::to_string(++anon_) + ")"
                           : name;
    Type t = make_int(4, false);
    t.name = full;
    if (!accept("{"))
      return t;
    int64_t next = 0;
    auto &names = types_.enums[full];
    while (ok_ && !accept("}")) {
      if (peek().kind != Token::Ident) {
        fail("expected an enumerator but found '" + peek().text + "'");
        break;
      }
      std::string e = peek().text;
      pos_++;
      if (accept("="))
        next = const_expr();
      names[next] = e;
      types_.enum_values[e] = {full, next};
      next++;
      if (!accept(",")) {
        expect("}");
        break;
      }
    }
    bool negative = false;
    for (auto &[v, n] : names)
      negative |= v < 0;
    t.is_signed = negative;
    return t;
  }

  // `*`... NAME [N]... or (*NAME)(params)
  Type declarator(Type base, bool plain_char, std::string &name) {
    Type t = base;
    while (accept("*")) {
      while (peek().kind == Token::Ident && is_qualifier(peek().text))
        pos_++;
      t = make_pointer(t);
    }
    if (accept("(")) {
      // Function pointer: (*name)(...)
      while (accept("*"))
        ;
      if (peek().kind == Token::Ident) {
        name = peek().text;
        pos_++;
      }
      expect(")");
      if (accept("(")) {
        int depth = 1;
        while (depth > 0 && peek().kind != Token::End) {
          if (accept("("))
            depth++;
          else if (accept(")"))
            depth--;
          else
            pos_++;
        }
      }
      return make_pointer(make_void());
    }
    if (peek().kind == Token::Ident) {
      name = peek().text;
      pos_++;
    }
    std::vector<uint64_t> dims;
    while (accept("[")) {
      uint64_t n = 0;
      if (!accept("]")) {
        n = static_cast<uint64_t>(const_expr());
        expect("]");
      }
      dims.push_back(n);
    }
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      // char arrays are strings, as in bpftrace.
      if (plain_char && t.is_int() && t.size == 1 && it == dims.rbegin() &&
          t.name.empty()) {
        t = make_string(static_cast<uint32_t>(*it));
        t.c_chars = true; // all N bytes may be characters: no trailer
      } else
        t = make_array(t, static_cast<uint32_t>(*it));
    }
    return t;
  }

  void parse_definition() {
    if (accept_word("typedef")) {
      Type base = base_type();
      bool plain_char = plain_char_;
      do {
        std::string name;
        Type t = declarator(base, plain_char, name);
        if (name.empty())
          fail("typedef without a name");
        else
          types_.typedefs[name] = t;
      } while (ok_ && accept(","));
      expect(";");
      return;
    }
    Type t = base_type();
    if (!ok_)
      return;
    // struct X { ... } x; declares a variable too: not supported in scripts.
    if (peek().kind == Token::Ident || accept("*"))
      fail("variable declarations are not allowed in C definitions");
    accept(";");
  }
};

} // namespace

bool parse_c_definitions(const std::string &text, const Location &loc,
                         CTypes &types, Diagnostics &diags) {
  CParser p(text, loc, types, diags);
  return p.parse_all();
}

namespace {

// `<x>` or `"x"` of an #include line, "" when it has neither.
std::string include_target(const std::string &line) {
  size_t at = line.find("include");
  if (at == std::string::npos)
    return "";
  size_t b = line.find_first_of("<\"", at);
  if (b == std::string::npos)
    return "";
  size_t e = line.find(line[b] == '<' ? '>' : '"', b + 1);
  return e == std::string::npos ? "" : line.substr(b, e - b + 1);
}

// The integer and string constants the script's headers define, into
// ctx.c_types.defines (as decimal text or a quoted string). A macro whose
// body is not a constant expression of integers and other such macros is
// left out; so is one named like a builtin (a script's `pid` stays pid).
bool load_header_macros(ASTContext &ctx) {
  if (!ctx.c_headers)
    return true; // no preprocessor here: #include lines are only recorded
  std::vector<std::string> headers = ctx.c_headers->forced();
  const Location *where = &ctx.root->loc;
  bool located = false;
  for (auto *def : ctx.root->c_definitions) {
    if (def->form != CDefinition::Form::Include)
      continue;
    std::string h = include_target(def->text);
    if (h.empty()) {
      ctx.diags().error(def->loc) << "#include expects <FILE> or \"FILE\"";
      return false;
    }
    headers.push_back(h);
    if (!located)
      where = &def->loc;
    located = true;
  }
  if (headers.empty())
    return true;
  std::map<std::string, std::string> raw;
  std::string error;
  if (!ctx.c_headers->macros(headers, raw, error)) {
    ctx.diags().error(*where) << "C header: " << error;
    return false;
  }
  CTypes &types = ctx.c_types;
  for (auto it = raw.begin(); it != raw.end();) {
    const std::string &body = it->second;
    if (lookup_builtin(it->first) || types.defines.count(it->first)) {
      it = raw.erase(it);
    } else if (body.size() >= 2 && body.front() == '"' && body.back() == '"' &&
               body.find('"', 1) == body.size() - 1) {
      types.defines[it->first] = body;
      it = raw.erase(it);
    } else {
      ++it;
    }
  }
  // Macros defined by others: resolved as those are.
  for (bool progress = true; progress && !raw.empty();) {
    progress = false;
    for (auto it = raw.begin(); it != raw.end();) {
      Diagnostics quiet_diags;
      CParser p(it->second, ctx.root->loc, types, quiet_diags, true);
      if (auto v = p.constant()) {
        types.defines[it->first] = std::to_string(*v);
        it = raw.erase(it);
        progress = true;
      } else {
        ++it;
      }
    }
  }
  return true;
}

} // namespace

bool run_c_definitions_pass(ASTContext &ctx) {
  bool ok = load_header_macros(ctx);
  for (auto *def : ctx.root->c_definitions) {
    switch (def->form) {
    case CDefinition::Form::Include:
      break; // its macros are in (load_header_macros)
    case CDefinition::Form::Define: {
      std::istringstream in(def->text);
      std::string hash, name, value;
      in >> hash;
      if (hash == "#")
        in >> hash;
      in >> name;
      std::getline(in, value);
      size_t b = value.find_first_not_of(" \t");
      value = b == std::string::npos ? "" : value.substr(b);
      if (name.empty() || name.find('(') != std::string::npos) {
        ctx.diags().error(def->loc)
            << "only simple #define NAME VALUE macros are supported";
        ok = false;
        break;
      }
      ctx.c_types.defines[name] = value;
      break;
    }
    case CDefinition::Form::Definition:
      ok &= parse_c_definitions(def->text, def->loc, ctx.c_types, ctx.diags());
      break;
    }
  }
  return ok;
}

} // namespace ubtrace::ast
