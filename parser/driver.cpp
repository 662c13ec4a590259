#include "parser/driver.h"

#include "ast/builtins.h"
#include "ast/depth_check.h"
#include "ast/int_literal.h"
#include "parser/grammar.hh"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

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

Driver::Driver(ast::ASTContext &c, const ast::SourceFile &f) : ctx(c), file(f) {
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
  std::string_view s(text, len);
  bool hex = s.size() > 1 && (s[1] == 'x' || s[1] == 'X');
  // Separators go between digits: "1_000" is fine, "1_" and "1_ms" are not.
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '_')
      continue;
    size_t j = s.find_first_not_of('_', i);
    unsigned char next = j == std::string_view::npos ? '\0' : s[j];
    if (!(hex ? std::isxdigit(next) : std::isdigit(next))) {
      error(loc, "trailing underscore in integer literal");
      return 0;
    }
  }
  uint64_t value = 0;
  std::string why;
  if (!ast::parse_int_literal(s, value, why)) {
    error(loc, why);
    return 0;
  }
  return value;
}

std::string Driver::bad_suffix(const char *text) const {
  std::string_view s(text);
  size_t i = 0;
  if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    i = 2;
    while (i < s.size() &&
           (std::isxdigit(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      i++;
    if (i == 2)
      i = 1; // "0x" alone: the x is the bad part
  } else {
    while (i < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      i++;
  }
  return "invalid integer suffix '" + std::string(s.substr(i)) + "'";
}

int Driver::positional_index(const char *digits) {
  long long n = 0;
  for (const char *p = digits; *p; p++) {
    n = n * 10 + (*p - '0');
    if (n > INT_MAX) {
      error(loc, std::string("param $") + digits +
                     " is out of integer range [1, " + std::to_string(INT_MAX) +
                     "]");
      return 0;
    }
  }
  return static_cast<int>(n);
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
    case '\\':
    case '"':
      out += e;
      break;
    case 'x':
    case 'X': {
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
        error(loc, "invalid hex escape sequence");
      out += static_cast<char>(v);
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        int v = e - '0', n = 1;
        while (n < 3 && i + 1 < len && text[i + 1] >= '0' &&
               text[i + 1] <= '7') {
          v = v * 8 + (text[++i] - '0');
          n++;
        }
        if (v > 255)
          error(loc, "octal escape sequence out of range '\\" +
                         std::string(text + i - n + 1, n) + "'");
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
  case K::S_IF_EXPR:
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

namespace {
int section_rank(Driver::Section s) {
  switch (s) {
  case Driver::Section::CDefinitions:
    return 0;
  case Driver::Section::Config:
  case Driver::Section::Import:
    return 1;
  case Driver::Section::Main:
    return 2;
  }
  return 2;
}
} // namespace

namespace {
// The word after "#define" or "#ifdef"/"#ifndef" in a directive's text.
std::string directive_name(const char *text, const char *directive) {
  std::string s(text);
  size_t at = s.find(directive);
  if (at == std::string::npos)
    return "";
  at = s.find_first_not_of(" \t", at + std::strlen(directive));
  if (at == std::string::npos)
    return "";
  size_t end = s.find_first_not_of(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", at);
  return s.substr(at, end == std::string::npos ? std::string::npos : end - at);
}
} // namespace

void Driver::pp_define(const char *text) {
  std::string name = directive_name(text, "define");
  if (!name.empty())
    pp_defined.push_back(name);
}

bool Driver::pp_if(const char *text) {
  bool negate = std::strstr(text, "ifndef") != nullptr;
  std::string name = directive_name(text, negate ? "ifndef" : "ifdef");
  bool defined =
      std::find(pp_defined.begin(), pp_defined.end(), name) != pp_defined.end();
  bool read = defined != negate;
  pp_blocks.push_back({loc, read, false});
  return read;
}

bool Driver::pp_else() {
  if (pp_skip_depth > 0)
    return false;
  if (pp_blocks.empty()) {
    error(loc, "#else without #ifdef or #ifndef");
    return true;
  }
  PpBlock &b = pp_blocks.back();
  if (b.in_else)
    error(loc, "a second #else for one #ifdef or #ifndef");
  b.in_else = true;
  bool read = !b.taken;
  b.taken = true;
  return read;
}

bool Driver::pp_endif() {
  if (pp_skip_depth > 0) {
    pp_skip_depth--;
    return false;
  }
  if (pp_blocks.empty()) {
    error(loc, "#endif without #ifdef or #ifndef");
    return true;
  }
  pp_blocks.pop_back();
  return true;
}

ast::Location Driver::pp_open_loc() const {
  return pp_blocks.empty() ? loc : pp_blocks.back().loc;
}

void Driver::check_order(const ast::Location &l, Section s) {
  if (section_rank(s) >= section_rank(section)) {
    section = s;
    return;
  }
  // What bpftrace says for each item that comes too late.
  switch (s) {
  case Section::CDefinitions:
    error(l, "C definitions must appear before probes and functions");
    return;
  case Section::Config:
    error(l, "config must appear before probes and functions");
    return;
  case Section::Import:
    error(l, "root imports must appear before probes and functions");
    return;
  case Section::Main:
    return;
  }
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

namespace {

// `import "lib.bt";` merges another script's definitions and probes into the
// program. Paths are relative to the importing script (to the working
// directory for -e programs); each file is imported once.
class Importer {
public:
  explicit Importer(ast::ASTContext &ctx) : ctx_(ctx) {}

  void resolve(ast::Program &from, const ast::SourceFile &file) {
    // The imported programs' own imports are resolved as they are read.
    std::vector<ast::Import *> imports = from.imports;
    for (auto *imp : imports)
      import(*imp, file);
  }

private:
  ast::ASTContext &ctx_;
  std::set<std::string> seen_;

  std::string path_of(const ast::Import &imp, const ast::SourceFile &file) {
    const std::string &p = imp.path;
    if (!p.empty() && p[0] == '/')
      return p;
    size_t slash = file.name.rfind('/');
    if (&file == &ctx_.source() && file.name == "stdin")
      return p;
    return slash == std::string::npos ? p : file.name.substr(0, slash + 1) + p;
  }

  void import(ast::Import &imp, const ast::SourceFile &file) {
    std::string path = path_of(imp, file);
    if (path.size() < 3 || path.compare(path.size() - 3, 3, ".bt") != 0) {
      ctx_.diags().error(imp.loc) << "unknown import type: " << imp.path
                                  << " (ubtrace imports .bt scripts)";
      return;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      ctx_.diags().error(imp.loc)
          << "error reading import '" << path << "': " << std::strerror(errno);
      return;
    }
    char *real = ::realpath(path.c_str(), nullptr);
    std::string key = real ? real : path;
    std::free(real);
    if (!seen_.insert(key).second)
      return;
    std::ostringstream text;
    text << in.rdbuf();
    const ast::SourceFile *src = ctx_.add_source(path, text.str());
    ast::Program *prog = parse_source(ctx_, *src);
    if (!prog)
      return;
    if (prog->has_config)
      ctx_.diags().error(prog->config.empty() ? imp.loc : prog->config[0]->loc)
          << "invalid `config` within import";
    resolve(*prog, *src);
    ast::Program &root = *ctx_.root;
    auto append = [](auto &to, const auto &from) {
      to.insert(to.end(), from.begin(), from.end());
    };
    append(root.c_definitions, prog->c_definitions);
    append(root.map_decls, prog->map_decls);
    append(root.macros, prog->macros);
    append(root.functions, prog->functions);
    append(root.probes, prog->probes);
  }
};

} // namespace

bool parse(ast::ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  ctx.root = parse_source(ctx, ctx.source());
  if (ctx.root && ctx.diags().error_count() == before)
    Importer(ctx).resolve(*ctx.root, ctx.source());
  if (ctx.root && ctx.diags().error_count() == before)
    ast::check_nesting_depth(ctx);
  return ctx.root != nullptr && ctx.diags().error_count() == before;
}

} // namespace ubtrace::parser
