// ASTContext owns a script's source files, its nodes, its diagnostics and the
// C types its definitions declare.
#pragma once

#include "ast/ast.h"
#include "ast/debug_types.h"
#include "ast/diagnostics.h"
#include "ast/types.h"
#include "runtime/config/config.h"

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

// What semantic analysis learnt about a map, for code generation.
struct MapInfo {
  std::string name;
  Type key;              // None for a scalar map; a tuple for @m[a, b]
  Type value;            // an aggregation kind for count(), hist(), ...
  bool keyed = false;    // used with [...]
  bool scalar = false;   // used without [...]
  bool assigned = false; // written somewhere
  Location first_use;
  std::string decl_kind; // from `let @m = lruhash(N);`, "" when undeclared
  uint64_t max_entries = 0;
  // From a `// ubtrace:metric` comment (passes/metric_annotations.h): the
  // key parts' label names (empty: key0..N) and the help text.
  std::vector<std::string> metric_labels;
  std::string metric_help;
};

// C headers a script includes (`#include <errno.h>`, --include): the
// object-like macros they define, for constants (EPERM, O_CREAT, AF_INET).
// ast/ runs no preprocessor: the CLI implements this with the system's
// (backends/cli/c_headers.cpp). Null: #include is refused.
class CHeaders {
public:
  virtual ~CHeaders() = default;
  // Every object-like macro `headers` define, NAME -> body as written
  // (each header as `<x>` or `"x"` as #include names it, or a bare name
  // or path given with --include); false with `error` set when one cannot
  // be read (not found, does not preprocess).
  virtual bool macros(const std::vector<std::string> &headers,
                      std::map<std::string, std::string> &out,
                      std::string &error) = 0;
  // Headers to include before the script's own (--include FILE).
  virtual std::vector<std::string> forced() const { return {}; }
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
  size_t node_count() const { return nodes_.size(); }
  const SourceFile *add_source(std::string filename, std::string text);
  // A copy of l that lives as long as the context (Location::expanded_from).
  const Location *keep(const Location &l) {
    kept_.push_back(l);
    return &kept_.back();
  }
  Diagnostics &diags() { return diags_; }

  Program *root = nullptr;
  CTypes c_types;
  std::vector<std::string> positional; // $1..$N from the command line
  // NAME or NAME=VALUE, for each --NAME[=VALUE] after `--` (getopt())
  std::vector<std::string> named_args;
  // The config variables: defaults, then the script's config block (the
  // config pass), then the environment (the CLI, right after that pass).
  runtime::Config config;
  bool unsafe = false; // --unsafe: system(), signal() allowed
  // Filled by semantic analysis.
  std::map<std::string, MapInfo> maps;
  bool probe_text = false; // `probe` is used as a string somewhere
  bool dw_ustack = false;  // dw_ustack() is called somewhere
  // The traced binaries' debug information (`args`, struct types without
  // C definitions, source-line probes); null where there is none to read.
  DebugTypes *debug_types = nullptr;
  CHeaders *c_headers = nullptr;

private:
  std::vector<std::unique_ptr<SourceFile>> files_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::deque<Location> kept_;
  Diagnostics diags_;
};

// Deep copies (macro expansion, unroll, compound assignment).
Expr *clone(ASTContext &ctx, const Expr *e);
TypeSpec clone_spec(ASTContext &ctx, const TypeSpec &s);
Stmt *clone(ASTContext &ctx, const Stmt *s);
Block *clone(ASTContext &ctx, const Block *b);

} // namespace ubtrace::ast
