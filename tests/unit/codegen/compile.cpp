#include "compile.h"

#include "ast/pass_manager.h"
#include "parser/driver.h"

namespace ubtrace::test {

bool compile(const std::string &script, codegen::Output &out, std::string &err,
             const std::vector<std::string> &positional, bool unsafe) {
  ast::ASTContext ctx("stdin", script);
  ctx.positional = positional;
  ctx.unsafe = unsafe;
  if (!parser::parse(ctx) || !ast::run_passes(ctx, ast::semantic_passes())) {
    err = ctx.diags().str();
    return false;
  }
  codegen::Options opts;
  opts.want_disasm = true;
  auto r = codegen::generate(ctx, opts);
  if (!r) {
    err = ctx.diags().str() + r.error();
    return false;
  }
  out = std::move(*r);
  return true;
}

} // namespace ubtrace::test
