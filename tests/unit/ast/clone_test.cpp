// ast/context clone(): deep copies of every node kind, as macro expansion
// and compound assignments use them.
#include "ast/context.h"
#include "ast/printer.h"
#include "ast/visitor.h"
#include "parser/driver.h"

#include <gtest/gtest.h>
#include <sstream>

namespace ubtrace::ast {
namespace {

std::string print_block(Block *b) {
  Program p(Location{});
  auto probe = Probe(Location{});
  probe.body = b;
  p.probes.push_back(&probe);
  std::ostringstream os;
  print_ast(os, p, false);
  return os.str();
}

// Counts the nodes reachable from a block and collects their addresses.
struct Collect : Visitor<Collect> {
  using Visitor::visit;
  std::vector<const Node *> seen;
  void visit(Expr *&e) {
    if (e)
      seen.push_back(e);
    Visitor::visit(e);
  }
  void visit(Stmt *&s) {
    if (s)
      seen.push_back(s);
    Visitor::visit(s);
  }
};

TEST(Clone, EveryNodeKindPrintsTheSame) {
  ASTContext ctx("stdin", R"(struct S { int a; }
BEGIN {
  $i = 1; $s = "x"; $b = true; $p = $1; $n = $#; @m[1, "k"] = 2;
  $c = f(1, g!(2)); $bin = 1 + 2 * 3; $u = -$i; $t = $i ? 1 : 2;
  $f = $r.a; $arr = $s[0]; $cast = (uint8)$i; $tup = (1, "a");
  $rec = (a = 1, b = 2); $blk = { let $z = 1; $z }; $sz = sizeof(struct S);
  $off = offsetof(struct S, a); $ty = (typeof($i))2;
  let $d: uint32 = 3; _ = 5;
  if ($i) { $i += 1; } else if ($b) { $i++; } else { --$i; }
  unroll (2) { $i--; }
  while ($i) { break; }
  for ($kv : @m) { continue; }
  for ($j : 0..$i) { }
  return;
})");
  ASSERT_TRUE(parser::parse(ctx)) << ctx.diags().str();
  Block *body = ctx.root->probes[0]->body;
  Block *copy = clone(ctx, body);
  EXPECT_EQ(print_block(copy), print_block(body));

  // No node is shared between the original and the copy.
  Collect a, b;
  a.visit(*body);
  b.visit(*copy);
  ASSERT_EQ(a.seen.size(), b.seen.size());
  for (const Node *n : a.seen)
    EXPECT_EQ(std::find(b.seen.begin(), b.seen.end(), n), b.seen.end());
}

TEST(Clone, CopiesAreIndependent) {
  ASTContext ctx("stdin", "BEGIN { $x = 1 + 2; }");
  ASSERT_TRUE(parser::parse(ctx));
  auto *assign = dyn_cast<AssignVar>(ctx.root->probes[0]->body->stmts[0]);
  auto *copy = dyn_cast<AssignVar>(clone(ctx, static_cast<Stmt *>(assign)));
  auto *sum = dyn_cast<Binop>(copy->value);
  dyn_cast<Integer>(sum->left)->value = 40;
  copy->var->name = "$y";
  EXPECT_EQ(dyn_cast<Integer>(dyn_cast<Binop>(assign->value)->left)->value, 1u);
  EXPECT_EQ(assign->var->name, "$x");
}

TEST(Clone, NullIsNull) {
  ASTContext ctx("stdin", "");
  EXPECT_EQ(clone(ctx, static_cast<const Expr *>(nullptr)), nullptr);
  EXPECT_EQ(clone(ctx, static_cast<const Block *>(nullptr)), nullptr);
}

} // namespace
} // namespace ubtrace::ast
