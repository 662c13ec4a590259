#include "tests/unit/session/script_compile.h"

#include "ast/context.h"
#include "ast/pass_manager.h"
#include "codegen/codegen.h"
#include "parser/driver.h"

#include <sstream>

namespace ubtrace::session_test {

Result<runtime::Bundle> compile_script(const std::string &program) {
  ast::ASTContext ctx("stdin", program);
  bool ok = parser::parse(ctx) && ast::run_passes(ctx, ast::semantic_passes());
  std::ostringstream diags;
  ctx.diags().emit(diags, false);
  if (!ok)
    return make_error(diags.str());
  ctx.diags() = ast::Diagnostics();
  auto out = codegen::generate(ctx, codegen::Options{});
  if (!out) {
    ctx.diags().emit(diags, false);
    return make_error(out.error() + diags.str());
  }
  return std::move(out->bundle);
}

} // namespace ubtrace::session_test
