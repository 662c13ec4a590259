// Syntax errors: bison's message in bpftrace's format, on the token that
// broke the parse, and what the driver reports for the parse overall.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(SyntaxErrors, UnexpectedTokenIsUnderlined) {
  EXPECT_EQ(parse_tree("BEGIN { $x = 1 +; }"),
            R"(stdin:1:17-18: ERROR: syntax error, unexpected ;
BEGIN { $x = 1 +; }
                ~
)");
}

TEST(SyntaxErrors, PseudoTokensShowAsTheirCharacters) {
  // LPAREN_CAST, LBRACE_EXPR, PRED_OPEN print as "(", "{" and "/".
  EXPECT_EQ(parse_tree("BEGIN { $x = (int8); }"),
            R"(stdin:1:20-21: ERROR: syntax error, unexpected ;
BEGIN { $x = (int8); }
                   ~
)");
  EXPECT_EQ(parse_tree("BEGIN { $x = 1 { }"),
            R"(stdin:1:16-17: ERROR: syntax error, unexpected {, expecting }
BEGIN { $x = 1 { }
               ~
)");
}

TEST(SyntaxErrors, UnbalancedBraces) {
  EXPECT_EQ(
      parse_tree("BEGIN { if (1) { }"),
      R"(stdin:1:18-19: ERROR: syntax error, unexpected end of file, expecting }
BEGIN { if (1) { }
                 ~
)");
  EXPECT_EQ(
      parse_tree("BEGIN { } }"),
      R"(stdin:1:11-12: ERROR: syntax error, unexpected }, expecting end of file
BEGIN { } }
          ~
)");
}

TEST(SyntaxErrors, UnbalancedParentheses) {
  EXPECT_EQ(parse_tree("BEGIN { print((1, 2); }"),
            R"(stdin:1:21-22: ERROR: syntax error, unexpected ;, expecting )
BEGIN { print((1, 2); }
                    ~
)");
}

TEST(SyntaxErrors, OnALaterLine) {
  EXPECT_EQ(parse_tree("BEGIN {\n  $x = 1;\n  $y = ;\n}\n"),
            R"(stdin:3:8-9: ERROR: syntax error, unexpected ;
  $y = ;
       ~
)");
}

TEST(SyntaxErrors, KeywordsAreReserved) {
  EXPECT_EQ(parse_tree("BEGIN { $x = while; }"),
            R"(stdin:1:14-19: ERROR: syntax error, unexpected while
BEGIN { $x = while; }
             ~~~~~
)");
}

TEST(SyntaxErrors, AssignmentToAFieldIsNotAllowed) {
  // Tuples and records are immutable; fields of structs are read-only.
  EXPECT_EQ(parse_tree("BEGIN { $t = (1, 2); $t.0 = 3; }"),
            R"(stdin:1:27-28: ERROR: syntax error, unexpected =, expecting }
BEGIN { $t = (1, 2); $t.0 = 3; }
                          ~
)");
}

// Found by fuzzing: thousands of nested levels overflowed the stack of
// the recursive passes. The parser refuses them.
TEST(SyntaxErrors, NestingDepthIsLimited) {
  std::string ok_src = "BEGIN { $x = " + std::string(200, '-') + "1; }";
  EXPECT_TRUE(parse_only(ok_src).parsed);
  std::string src = "BEGIN { $x = 1";
  for (int i = 0; i < 3000; i++)
    src += "+1";
  src += "; }";
  Frontend f = parse_only(src);
  EXPECT_FALSE(f.parsed);
  ASSERT_EQ(f.ctx->diags().all().size(), 1u);
  EXPECT_EQ(f.ctx->diags().all()[0].message,
            "the program is nested too deeply (more than 500 levels)");
  std::string blocks = "BEGIN { $x = " + std::string(3000, '{') + "1" +
                       std::string(3000, '}') + "; }";
  EXPECT_FALSE(parse_only(blocks).parsed);
}

TEST(SyntaxErrors, ParseReportsFailureAndNoTree) {
  ast::ASTContext ctx("stdin", "BEGIN { $x = ; }");
  EXPECT_FALSE(parser::parse(ctx));
  EXPECT_EQ(ctx.root, nullptr);
  EXPECT_EQ(ctx.diags().error_count(), 1u);
}

TEST(SyntaxErrors, LexicalErrorsFailTheParseEvenWhenTheGrammarAccepts) {
  ast::ASTContext ctx("stdin", "BEGIN { $x = 1_; }");
  EXPECT_FALSE(parser::parse(ctx));
  EXPECT_NE(ctx.root, nullptr);
  EXPECT_EQ(ctx.diags().error_count(), 1u);
}

TEST(SyntaxErrors, FileNameInTheLocation) {
  ast::ASTContext ctx("/tmp/tool.bt", "BEGIN {\n  printf(\n}\n");
  EXPECT_FALSE(parser::parse(ctx));
  EXPECT_EQ(
      ctx.diags().str(),
      R"(/tmp/tool.bt:3:1-2: ERROR: syntax error, unexpected }, expecting )
}
~
)");
}

} // namespace
} // namespace ubtrace::test
