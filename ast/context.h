// ASTContext owns a script's source files, its nodes, its diagnostics and the
// C types its definitions declare.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ast/ast.h"
#include "ast/diagnostics.h"
#include "ast/types.h"

namespace ubtrace::ast {

// Types from the script's C definitions: struct/union layouts, enums and
// typedefs, by name ("struct foo", "union bar", "enum baz", "my_t").
struct CTypes {
  std::map<std::string, Type> records; // "struct foo" -> CStruct type
  std::map<std::string, Type> typedefs;
  std::map<std::string, std::map<int64_t, std::string>> enums;
  std::map<std::string, std::pair<std::string, int64_t>> enum_values;
  std::map<std::string, std::string> defines; // #define NAME VALUE
};

class ASTContext {
public:
  ASTContext(std::string filename, std::string text);
  ASTContext(const ASTContext &) = delete;
  ASTContext &operator=(const ASTContext &) = delete;

  template <class T, class... Args> T *make(Args &&...args) {
    auto node = std::make_unique<T>(std::forward<Args>(args)...);
    T *raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  }

  const SourceFile &source() const { return *files_.front(); }
  const SourceFile *add_source(std::string filename, std::string text);
  Diagnostics &diags() { return diags_; }

  Program *root = nullptr;
  CTypes c_types;
  std::vector<std::string> positional; // $1..$N from the command line

private:
  std::vector<std::unique_ptr<SourceFile>> files_;
  std::vector<std::unique_ptr<Node>> nodes_;
  Diagnostics diags_;
};

// Deep copies (macro expansion, unroll, compound assignment).
Expr *clone(ASTContext &ctx, const Expr *e);
Stmt *clone(ASTContext &ctx, const Stmt *s);
Block *clone(ASTContext &ctx, const Block *b);

} // namespace ubtrace::ast
