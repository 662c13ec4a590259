// Imports: `import "lib.bt";` merges another script's macros, functions,
// map declarations, C definitions and probes. Paths are relative to the
// importing script; each file is read once; config blocks stay in the root
// script.
#include "tests/unit/parser/frontend_support.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ubtrace::test {
namespace {

namespace fs = std::filesystem;

class Imports : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ubtrace-imports-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string &name, const std::string &text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  Frontend run(const std::string &main_path) {
    std::ifstream in(main_path);
    std::stringstream text;
    text << in.rdbuf();
    Frontend f;
    f.ctx = std::make_unique<ast::ASTContext>(main_path, text.str());
    f.parsed = parser::parse(*f.ctx);
    f.ok = f.parsed && ast::run_passes(*f.ctx, ast::semantic_passes());
    return f;
  }

  fs::path dir_;
};

TEST_F(Imports, MacrosAndProbesAreMerged) {
  write("lib/helpers.bt", "import \"inner.bt\";\n"
                          "macro twice(x) { x * 2 }\n"
                          "let @seen = hash(16);\n");
  write("lib/inner.bt", "macro thrice(x) { x * 3 }\n"
                        "END { print(twice(thrice(1))); }\n");
  std::string main = write("tool.bt", "import \"lib/helpers.bt\";\n"
                                      "BEGIN { @seen[1] = twice(3); }\n");
  Frontend f = run(main);
  EXPECT_TRUE(f.ok) << f.diags();
  ASSERT_EQ(f.ctx->root->probes.size(), 2u);
  EXPECT_EQ(f.ctx->root->macros.size(), 2u);
  ASSERT_EQ(f.ctx->root->map_decls.size(), 1u);
  EXPECT_EQ(f.ctx->maps.at("@seen").decl_kind, "hash");
}

TEST_F(Imports, EachFileOnce) {
  write("a.bt", "macro m() { 1 }\n");
  std::string main = write("main.bt", "import \"a.bt\";\nimport \"./a.bt\";\n"
                                      "BEGIN { print(m()); }\n");
  Frontend f = run(main);
  EXPECT_TRUE(f.ok) << f.diags();
  EXPECT_EQ(f.ctx->root->macros.size(), 1u);
}

TEST_F(Imports, ImportCyclesEnd) {
  write("a.bt", "import \"b.bt\";\nmacro fa() { 1 }\n");
  write("b.bt", "import \"a.bt\";\nmacro fb() { 2 }\n");
  std::string main = write("main.bt", "import \"a.bt\";\n"
                                      "BEGIN { print(fa() + fb()); }\n");
  Frontend f = run(main);
  EXPECT_TRUE(f.ok) << f.diags();
  EXPECT_EQ(f.ctx->root->macros.size(), 2u);
}

TEST_F(Imports, ErrorsInImportedFilesNameTheFile) {
  std::string lib = write("lib.bt", "BEGIN { $x = ; }\n");
  std::string main = write("main.bt", "import \"lib.bt\";\nBEGIN { }\n");
  Frontend f = run(main);
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.diags(), lib + R"(:1:14-15: ERROR: syntax error, unexpected ;
BEGIN { $x = ; }
             ~
)");
}

TEST_F(Imports, MissingFile) {
  std::string main = write("main.bt", "import \"nope.bt\";\nBEGIN { }\n");
  Frontend f = run(main);
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.diags(), main + ":1:1-18: ERROR: error reading import '" +
                           (dir_ / "nope.bt").string() +
                           "': No such file or directory\n"
                           "import \"nope.bt\";\n~~~~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, OnlyScripts) {
  std::string main = write("main.bt", "import \"types.h\";\nBEGIN { }\n");
  EXPECT_EQ(run(main).diags(),
            main + ":1:1-18: ERROR: unknown import type: types.h (ubtrace "
                   "imports .bt scripts)\nimport \"types.h\";\n"
                   "~~~~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, NoConfigInImports) {
  std::string lib = write("lib.bt", "config = { max_strlen = 8 }\n");
  std::string main = write("main.bt", "import \"lib.bt\";\nBEGIN { }\n");
  EXPECT_EQ(run(main).diags(),
            lib + ":1:12-26: ERROR: invalid `config` within import\n"
                  "config = { max_strlen = 8 }\n"
                  "           ~~~~~~~~~~~~~~\n");
}

TEST_F(Imports, FromAProgramOnTheCommandLine) {
  write("lib.bt", "macro seven() { 7 }\n");
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(dir_.c_str()), 0);
  Frontend f = analyse("import \"lib.bt\"; BEGIN { print(seven()); }");
  ASSERT_EQ(::chdir(cwd), 0);
  EXPECT_TRUE(f.ok) << f.diags();
}

} // namespace
} // namespace ubtrace::test
