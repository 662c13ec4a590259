// Helpers shared by the front end's unit tests (tests/unit/parser and
// tests/unit/passes): run a script through the real parser and passes and
// return what a user would see, the tree dump or the diagnostics text.
#pragma once

#include "ast/context.h"
#include "ast/pass_manager.h"
#include "ast/printer.h"
#include "parser/driver.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace ubtrace::test {

struct RunOptions {
  std::vector<std::string> positional; // $1..$N
  bool unsafe = false;
  std::string last_pass; // stop after this pass ("" = all)
};

// A parsed (and possibly analysed) script. Keeps the context alive so a
// test can look at the tree, the maps or the C types.
struct Frontend {
  std::unique_ptr<ast::ASTContext> ctx;
  bool parsed = false;
  bool ok = false; // parsed and every pass run succeeded

  std::string diags() const { return ctx->diags().str(); }
  std::string tree(bool with_types = false) const {
    std::ostringstream os;
    if (ctx->root)
      ast::print_ast(os, *ctx->root, with_types);
    return os.str();
  }
};

inline Frontend parse_only(const std::string &src) {
  Frontend f;
  f.ctx = std::make_unique<ast::ASTContext>("stdin", src);
  f.parsed = parser::parse(*f.ctx);
  f.ok = f.parsed;
  return f;
}

inline Frontend analyse(const std::string &src, const RunOptions &o = {}) {
  Frontend f;
  f.ctx = std::make_unique<ast::ASTContext>("stdin", src);
  f.ctx->positional = o.positional;
  f.ctx->unsafe = o.unsafe;
  f.parsed = parser::parse(*f.ctx);
  f.ok =
      f.parsed && ast::run_passes(*f.ctx, ast::semantic_passes(), o.last_pass);
  return f;
}

// The tree as parsed, or the diagnostics when parsing failed.
inline std::string parse_tree(const std::string &src) {
  Frontend f = parse_only(src);
  return f.parsed ? f.tree() : f.diags();
}

// Drops the first `n` lines of `text` and `indent` leading spaces of the
// others.
inline std::string strip(const std::string &text, size_t n, size_t indent) {
  std::istringstream in(text);
  std::string line, out;
  for (size_t i = 0; std::getline(in, line); i++) {
    if (i < n)
      continue;
    out += line.substr(std::min(indent, line.size())) + "\n";
  }
  return out;
}

// The tree of a probe body: `body` is wrapped in `BEGIN { ... }` and the
// "Program" and "BEGIN" lines are dropped.
inline std::string body_tree(const std::string &body) {
  Frontend f = parse_only("BEGIN { " + body + " }");
  if (!f.parsed)
    return f.diags();
  return strip(f.tree(), 2, 2);
}

// Every diagnostic of a full run (parse and all passes), as printed.
inline std::string diagnostics(const std::string &src,
                               const RunOptions &o = {}) {
  return analyse(src, o).diags();
}

// The typed tree of a valid program, or its diagnostics.
inline std::string typed_tree(const std::string &src,
                              const RunOptions &o = {}) {
  Frontend f = analyse(src, o);
  return f.ok ? f.tree(true) : f.diags();
}

// The tree of the script's last probe's body (with types or not).
inline std::string last_probe_tree(const Frontend &f, bool with_types) {
  if (!f.ctx->root || f.ctx->root->probes.empty())
    return "";
  ast::Program only(f.ctx->root->loc);
  only.probes.push_back(f.ctx->root->probes.back());
  std::ostringstream os;
  ast::print_ast(os, only, with_types);
  return strip(os.str(), 1 + only.probes[0]->attach_points.size(), 2);
}

// The typed tree of a probe body run in `probe` (default BEGIN; it may
// start with definitions), without the "Program" and probe lines.
inline std::string typed_body(const std::string &body,
                              const std::string &probe = "BEGIN",
                              const RunOptions &o = {}) {
  Frontend f = analyse(probe + " { " + body + " }", o);
  if (!f.ok)
    return f.diags();
  return last_probe_tree(f, true);
}

} // namespace ubtrace::test
