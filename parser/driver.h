// Parsing a script: the driver ties the flex lexer and the bison parser to
// an ASTContext, and holds the lexer's context (brace depth, predicate
// state, the previous token) that decides ambiguous tokens.
#pragma once

#include "ast/context.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::parser {

// Parses the context's main source into ctx.root. Errors go to ctx.diags().
// Returns true when the script parsed without errors.
bool parse(ast::ASTContext &ctx);

// Parses one more source file (an import) into a new Program node.
ast::Program *parse_source(ast::ASTContext &ctx, const ast::SourceFile &file);

class Parser;

enum class Keyword {
  None,
  If,
  Else,
  For,
  While,
  Unroll,
  Return,
  Break,
  Continue,
  Let,
  Sizeof,
  Offsetof,
  Typeof,
  Struct,
  Union,
  Enum,
  True,
  False,
  Type, // int8..uint64, bool, string, buffer, inet, void and C's int words
};
Keyword keyword_kind(const std::string &word);

class Driver {
public:
  Driver(ast::ASTContext &ctx, const ast::SourceFile &file);

  ast::ASTContext &ctx;
  const ast::SourceFile &file;
  ast::Program *result = nullptr;

  // ---- lexer support ----
  ast::Location loc;   // of the current token
  size_t offset = 0;   // bytes consumed so far
  int brace_depth = 0; // in EXPR
  int paren_depth = 0; // in a predicate
  bool in_predicate = false;
  int last_token = 0; // kind of the previous token returned
  int prev_token = 0; // and the one before it

  void advance(const char *text, size_t len);
  // Undoes the last advance() over `len` bytes of one line (before a
  // yyless(0) that gives them back to the scanner).
  void retreat(size_t len) {
    loc.end = loc.begin;
    offset -= len;
  }
  ast::Location last_loc; // of the previous token returned
  template <class Symbol> Symbol emit(Symbol sym) {
    prev_token = last_token;
    last_token = static_cast<int>(sym.kind());
    last_loc = loc;
    return sym;
  }
  ast::Location end_location() const {
    return last_loc.valid() ? last_loc : loc;
  }
  void error(const ast::Location &l, const std::string &msg);

  uint64_t parse_integer(const char *text, size_t len);
  // The message for a literal followed by letters that are no suffix.
  std::string bad_suffix(const char *text) const;
  // $N -> N; reports indexes that do not fit an int.
  int positional_index(const char *digits);
  ast::Location comment_loc; // where the open /* comment started

  // Preprocessor conditionals: names #defined so far, and the open
  // #ifdef/#ifndef blocks. pp_if and pp_else return whether the lines that
  // follow are read (else the lexer skips to the matching #else/#endif);
  // pp_endif whether the block it closes was open here (not nested in a
  // skipped one).
  void pp_define(const char *text);
  bool pp_if(const char *text);
  bool pp_else();
  bool pp_endif();
  ast::Location pp_open_loc() const;
  int pp_skip_depth = 0; // #if blocks opened inside a skipped one
  struct PpBlock {
    ast::Location loc;
    bool taken;   // a branch of it was read
    bool in_else; // past its #else
  };
  std::vector<PpBlock> pp_blocks;
  std::vector<std::string> pp_defined;
  std::string unescape(const char *text, size_t len);
  // The '(' just read opens a cast (or a type in sizeof/offsetof/typeof).
  bool cast_follows() const;
  // The '{' just read opens a block expression rather than a block.
  bool block_expr_context() const;
  // The '/' just read is followed by the probe body's '{'.
  bool predicate_ends() const;

  // A script's sections come in order: C definitions, then the config
  // block and imports, then probes, macros, functions and map declarations.
  enum class Section { CDefinitions, Config, Import, Main };
  // Config and Import share a rank: they come in any order.
  Section section = Section::CDefinitions;
  void check_order(const ast::Location &l, Section s);

  // C definitions captured as text.
  std::string cdef_text;
  ast::Location cdef_loc;
  int cdef_depth = 0;
  int cdef_attr_depth = 0; // parentheses open in __attribute__((...))
  // After a record's '}': blanks that join the definition only if an
  // __attribute__ follows, and where the definition ends so far.
  std::string cdef_pending;
  ast::Location cdef_end;
  void take_cdef_attr(const char *text) {
    cdef_text += cdef_pending + text;
    cdef_pending.clear();
    cdef_end = loc;
  }
  bool cdef_typedef = false;
  void begin_cdef(const char *keyword);
};

} // namespace ubtrace::parser
