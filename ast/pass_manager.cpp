#include "ast/pass_manager.h"

#include "ast/passes/attach_points.h"
#include "ast/passes/c_definitions.h"
#include "ast/passes/config.h"
#include "ast/passes/macro_expansion.h"
#include "ast/passes/metric_annotations.h"
#include "ast/passes/named_params.h"
#include "ast/passes/semantic.h"

namespace ubtrace::ast {

const std::vector<Pass> &semantic_passes() {
  static const std::vector<Pass> passes = {
      {"config", run_config_pass},
      {"c-definitions", run_c_definitions_pass},
      {"macro-expansion", run_macro_expansion},
      {"named-params", run_named_params_pass},
      {"attach-points", run_attach_point_pass},
      {"semantic", run_semantic_analysis},
      {"metric-annotations", run_metric_annotations},
  };
  return passes;
}

bool run_passes(ASTContext &ctx, const std::vector<Pass> &passes,
                const std::string &last) {
  for (const auto &p : passes) {
    size_t before = ctx.diags().error_count();
    bool ok = p.run(ctx);
    if (!ok || ctx.diags().error_count() != before)
      return false;
    if (p.name == last)
      break;
  }
  return true;
}

} // namespace ubtrace::ast
