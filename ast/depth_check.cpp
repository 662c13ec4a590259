#include "ast/depth_check.h"

#include "ast/visitor.h"

namespace ubtrace::ast {

namespace {

// Recurses like every other pass, but never deeper than the limit.
class DepthCheck : public Visitor<DepthCheck> {
public:
  explicit DepthCheck(ASTContext &ctx) : ctx_(ctx) {}
  using Visitor::visit;

  void visit(Expr *&e) {
    if (e && enter(e->loc))
      Visitor::visit(e);
    leave();
  }
  void visit(Stmt *&s) {
    if (s && enter(s->loc))
      Visitor::visit(s);
    leave();
  }
  bool too_deep = false;

private:
  ASTContext &ctx_;
  int depth_ = 0;

  bool enter(const Location &loc) {
    if (too_deep)
      return false;
    if (++depth_ <= kMaxNestingDepth)
      return true;
    too_deep = true;
    ctx_.diags().error(loc) << "the program is nested too deeply (more than "
                            << kMaxNestingDepth << " levels)";
    return false;
  }
  void leave() { depth_--; }
};

} // namespace

bool check_nesting_depth(ASTContext &ctx) {
  if (!ctx.root)
    return true;
  DepthCheck d(ctx);
  d.visit(*ctx.root);
  for (auto *m : ctx.root->macros)
    if (!d.too_deep)
      d.visit(*m->body);
  return !d.too_deep;
}

} // namespace ubtrace::ast
