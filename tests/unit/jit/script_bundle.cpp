#include "tests/unit/jit/script_bundle.h"

#include "ast/context.h"
#include "ast/pass_manager.h"
#include "codegen/codegen.h"
#include "parser/driver.h"

#include <linux/bpf.h>
#include <sstream>

namespace ubtrace::jit::test {

Result<runtime::Bundle> compile_script(const std::string &program) {
  ast::ASTContext ctx("-e", program);
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

const vm::HelperTable &host_helper_protos() {
  static const vm::HelperTable table = [] {
    vm::HelperTable t = vm::standard_helpers();
    if (!t.find(BPF_FUNC_map_lookup_percpu_elem)) {
      vm::HelperProto p;
      p.id = BPF_FUNC_map_lookup_percpu_elem;
      p.name = "map_lookup_percpu_elem";
      p.ret = vm::RetKind::MapValueOrNull;
      p.args = {vm::ArgKind::MapPtr, vm::ArgKind::MapKey, vm::ArgKind::Scalar,
                vm::ArgKind::None, vm::ArgKind::None};
      t.add(p);
    }
    return t;
  }();
  return table;
}

} // namespace ubtrace::jit::test
