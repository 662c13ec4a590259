#include "parser/driver.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>

#include "ast/builtins.h"
#include "parser/grammar.hh"

typedef void *yyscan_t;
int ubtrace_lex_init_extra(ubtrace::parser::Driver *extra, yyscan_t *scanner);
int ubtrace_lex_destroy(yyscan_t scanner);
struct yy_buffer_state;
yy_buffer_state *ubtrace__scan_bytes(const char *bytes, int len,
                                     yyscan_t scanner);

namespace ubtrace::parser {

Keyword keyword_kind(const std::string &w) {
  static const std::map<std::string, Keyword> table = {
      {"if", Keyword::If},
      {"else", Keyword::Else},
      {"for", Keyword::For},
      {"while", Keyword::While},
      {"unroll", Keyword::Unroll},
      {"return", Keyword::Return},
      {"break", Keyword::Break},
      {"continue", Keyword::Continue},
      {"let", Keyword::Let},
      {"sizeof", Keyword::Sizeof},
      {"offsetof", Keyword::Offsetof},
      {"typeof", Keyword::Typeof},
      {"struct", Keyword::Struct},
      {"union", Keyword::Union},
      {"enum", Keyword::Enum},
      {"true", Keyword::True},
      {"false", Keyword::False},
      {"int8", Keyword::Type},
      {"uint8", Keyword::Type},
      {"int16", Keyword::Type},
      {"uint16", Keyword::Type},
      {"int32", Keyword::Type},
      {"uint32", Keyword::Type},
      {"int64", Keyword::Type},
      {"uint64", Keyword::Type},
      {"bool", Keyword::Type},
      {"string", Keyword::Type},
      {"buffer", Keyword::Type},
      {"inet", Keyword::Type},
      {"void", Keyword::Type},
      {"char", Keyword::Type},
      {"short", Keyword::Type},
      {"int", Keyword::Type},
      {"long", Keyword::Type},
      {"unsigned", Keyword::Type},
      {"signed", Keyword::Type},
  };
  auto it = table.find(w);
  return it == table.end() ? Keyword::None : it->second;
}

Driver::Driver(ast::ASTContext &c, const ast::SourceFile &f)
    : ctx(c), file(f) {
  loc.file = &file;
}

void Driver::advance(const char *text, size_t len) {
  loc.begin = loc.end;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\n') {
      loc.end.line++;
      loc.end.column = 1;
    } else {
      loc.end.column++;
    }
  }
  offset += len;
}

void Driver::error(const ast::Location &l, const std::string &msg) {
  ctx.diags().error(l) << msg;
}

uint64_t Driver::parse_integer(const char *text, size_t len) {
  std::string s(text, len);
  // Suffixes: durations scale to nanoseconds, C suffixes are ignored.
  uint64_t scale = 1;
  static const std::pair<const char *, uint64_t> durations[] = {
      {"ns", 1},
      {"us", 1000},
      {"ms", 1000000},
      {"s", 1000000000},
      {"m", 60ull * 1000000000},
      {"h", 3600ull * 1000000000},
      {"d", 86400ull * 1000000000},
  };
  bool hex = s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (!hex) {
    for (const auto &[suffix, factor] : durations) {
      size_t n = std::strlen(suffix);
      if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0 &&
          std::isdigit(static_cast<unsigned char>(s[s.size() - n - 1]))) {
        scale = factor;
        s.resize(s.size() - n);
        break;
      }
    }
  }
  while (!s.empty() && std::strchr("uUlL", s.back()))
    s.pop_back();
  std::string digits;
  for (char c : s)
    if (c != '_')
      digits += c;

  uint64_t mantissa = 0, exponent = 0;
  const char *p = digits.c_str();
  bool overflow = false;
  auto parse = [&](const char *str, int base, uint64_t &out) {
    errno = 0;
    char *end = nullptr;
    out = std::strtoull(str, &end, base);
    if (errno == ERANGE)
      overflow = true;
    return end;
  };
  if (hex) {
    parse(p + 2, 16, mantissa);
  } else if (auto e = digits.find_first_of("eE"); e != std::string::npos) {
    parse(digits.substr(0, e).c_str(), 10, mantissa);
    parse(p + e + 1, 10, exponent);
    for (uint64_t i = 0; i < exponent && !overflow; i++) {
      if (mantissa > UINT64_MAX / 10)
        overflow = true;
      mantissa *= 10;
    }
  } else if (digits.size() > 1 && digits[0] == '0') {
    const char *end = parse(p, 8, mantissa);
    if (*end) {
      error(loc, "invalid octal literal: " + std::string(text, len));
      return 0;
    }
  } else {
    parse(p, 10, mantissa);
  }
  if (!overflow && scale > 1 && mantissa > UINT64_MAX / scale)
    overflow = true;
  if (overflow) {
    error(loc, "integer literal is too large: " + std::string(text, len));
    return 0;
  }
  return mantissa * scale;
}

std::string Driver::unescape(const char *text, size_t len) {
  std::string out;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= len)
      break;
    char e = text[i];
    switch (e) {
    case 'n':
      out += '\n';
      break;
    case 't':
      out += '\t';
      break;
    case 'r':
      out += '\r';
      break;
    case 'a':
      out += '\a';
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'v':
      out += '\v';
      break;
    case 'e':
      out += '\033';
      break;
    case '\\':
    case '"':
    case '\'':
      out += e;
      break;
    case 'x': {
      int v = 0, n = 0;
      while (n < 2 && i + 1 < len &&
             std::isxdigit(static_cast<unsigned char>(text[i + 1]))) {
        char h = text[++i];
        v = v * 16 + (std::isdigit(static_cast<unsigned char>(h))
                          ? h - '0'
                          : std::tolower(h) - 'a' + 10);
        n++;
      }
      if (n == 0)
        error(loc, "invalid escape sequence '\\x': expected hex digits");
      out += static_cast<char>(v);
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        int v = e - '0', n = 1;
        while (n < 3 && i + 1 < len && text[i + 1] >= '0' && text[i + 1] <= '7') {
          v = v * 8 + (text[++i] - '0');
          n++;
        }
        if (v > 255)
          error(loc, "octal escape out of range");
        out += static_cast<char>(v);
        break;
      }
      error(loc, std::string("invalid escape character '\\") + e + "'");
      break;
    }
  }
  return out;
}

namespace {
// A tiny scanner over the source after the current token, for the few
// decisions that need more than one token of lookahead.
struct Peek {
  const std::string &s;
  size_t i;
  void skip_space() {
    for (;;) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        i++;
      if (s.compare(i, 2, "//") == 0) {
        while (i < s.size() && s[i] != '\n')
          i++;
      } else if (s.compare(i, 2, "/*") == 0) {
        size_t e = s.find("*/", i + 2);
        i = e == std::string::npos ? s.size() : e + 2;
      } else {
        return;
      }
    }
  }
  std::string word() {
    size_t start = i;
    if (i < s.size() &&
        (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_')) {
      while (i < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
        i++;
    }
    return s.substr(start, i - start);
  }
  char peek() const { return i < s.size() ? s[i] : '\0'; }
};
} // namespace

bool Driver::cast_follows() const {
  using K = Parser::symbol_kind;
  // f(...), m!(...), if (...), while (...), for (...), unroll (...): syntax,
  // never a cast.
  switch (last_token) {
  case K::S_IDENT:
  case K::S_IF:
  case K::S_WHILE:
  case K::S_FOR:
  case K::S_UNROLL:
    return false;
  case K::S_LNOT:
    if (prev_token == K::S_IDENT)
      return false;
    break;
  default:
    break;
  }
  Peek p{file.text, offset};
  p.skip_space();
  std::string w = p.word();
  if (w.empty())
    return false;
  Keyword k = keyword_kind(w);
  if (k == Keyword::Type || k == Keyword::Struct || k == Keyword::Union ||
      k == Keyword::Enum || k == Keyword::Typeof)
    return true;
  if (k != Keyword::None || ast::is_builtin_name(w))
    return false;
  // ( IDENT [* | [N]]... ) followed by the start of an expression.
  bool suffixes = false;
  for (;;) {
    p.skip_space();
    char c = p.peek();
    if (c == '*') {
      p.i++;
      suffixes = true;
    } else if (c == '[') {
      p.i++;
      p.skip_space();
      while (std::isdigit(static_cast<unsigned char>(p.peek())))
        p.i++;
      p.skip_space();
      if (p.peek() != ']')
        return false;
      p.i++;
      suffixes = true;
    } else {
      break;
    }
  }
  if (p.peek() != ')')
    return false;
  p.i++;
  if (suffixes && (last_token == K::S_SIZEOF || last_token == K::S_OFFSETOF ||
                   last_token == K::S_TYPEOF))
    return true;
  p.skip_space();
  char c = p.peek();
  if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
      c == '@' || c == '"' || c == '(' || c == '*' || c == '&' || c == '~' ||
      c == '{')
    return true;
  if (c == '!')
    return p.i + 1 < file.text.size() && file.text[p.i + 1] != '=';
  if (c == '-')
    return p.i + 1 < file.text.size() && file.text[p.i + 1] != '>' &&
           file.text[p.i + 1] != '-' && file.text[p.i + 1] != '=';
  return false;
}

bool Driver::block_expr_context() const {
  using K = Parser::symbol_kind;
  switch (last_token) {
  case K::S_ASSIGN:
  case K::S_PLUSEQ:
  case K::S_MINUSEQ:
  case K::S_MULEQ:
  case K::S_DIVEQ:
  case K::S_MODEQ:
  case K::S_ANDEQ:
  case K::S_OREQ:
  case K::S_XOREQ:
  case K::S_SHLEQ:
  case K::S_SHREQ:
  case K::S_LPAREN:
  case K::S_LPAREN_CAST:
  case K::S_COMMA:
  case K::S_LBRACKET:
  case K::S_QUES:
  case K::S_COLON:
  case K::S_RETURN:
  case K::S_PLUS:
  case K::S_MINUS:
  case K::S_MUL:
  case K::S_DIV:
  case K::S_MOD:
  case K::S_BAND:
  case K::S_BOR:
  case K::S_BXOR:
  case K::S_SHL:
  case K::S_SHR:
  case K::S_EQ:
  case K::S_NE:
  case K::S_LT:
  case K::S_LE:
  case K::S_GT:
  case K::S_GE:
  case K::S_LAND:
  case K::S_LOR:
  case K::S_LNOT:
  case K::S_BNOT:
  case K::S_DOTDOT:
  case K::S_PRED_OPEN:
    return true;
  default:
    return false;
  }
}

bool Driver::predicate_ends() const {
  Peek p{file.text, offset};
  p.skip_space();
  return p.peek() == '{';
}

void Driver::begin_cdef(const char *keyword) {
  cdef_text = keyword;
  cdef_loc = loc;
  cdef_depth = 0;
  cdef_typedef = std::strcmp(keyword, "typedef") == 0;
}

ast::Program *parse_source(ast::ASTContext &ctx, const ast::SourceFile &file) {
  Driver driver(ctx, file);
  ast::Location whole;
  whole.file = &file;
  whole.end.line = static_cast<int>(file.lines.size());
  driver.result = ctx.make<ast::Program>(whole);
  yyscan_t scanner = nullptr;
  ubtrace_lex_init_extra(&driver, &scanner);
  ubtrace__scan_bytes(file.text.data(), static_cast<int>(file.text.size()),
                      scanner);
  Parser parser(driver, scanner);
  int rc = parser.parse();
  ubtrace_lex_destroy(scanner);
  if (rc != 0)
    return nullptr;
  return driver.result;
}

bool parse(ast::ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  ctx.root = parse_source(ctx, ctx.source());
  return ctx.root != nullptr && ctx.diags().error_count() == before;
}

} // namespace ubtrace::parser
