// The script corpus (tests/corpus): every valid script must pass the front
// end without a diagnostic, and `ubtrace --dry-run` must accept it (exit 0,
// nothing on stderr); every invalid script must fail `ubtrace --dry-run`
// with exit code 1 and exactly the diagnostics in its .expected file.
//
// The binary is the build directory's ubtrace (UBTRACE_BUILD_DIR, set by
// ctest). Scripts run from their own directory under their bare file name,
// so the .expected files do not depend on where the tree is checked out.
#include "tests/unit/parser/frontend_support.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> scripts(const char *sub) {
  std::vector<std::string> out;
  fs::path dir = fs::path(UBTRACE_CORPUS_DIR) / sub;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".bt")
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

// Runs `ubtrace --dry-run NAME` in `dir`, capturing both streams.
Outcome run_ubtrace(const fs::path &dir, const std::string &name) {
  Outcome r;
  const char *build = std::getenv("UBTRACE_BUILD_DIR");
  if (!build) {
    r.err = "UBTRACE_BUILD_DIR is not set (run the test through ctest)";
    return r;
  }
  fs::path bin = fs::path(build) / "ubtrace";
  char out_tmpl[] = "/tmp/ubtrace-corpus-out-XXXXXX";
  char err_tmpl[] = "/tmp/ubtrace-corpus-err-XXXXXX";
  int out_fd = ::mkstemp(out_tmpl), err_fd = ::mkstemp(err_tmpl);
  if (out_fd < 0 || err_fd < 0) {
    r.err = "mkstemp failed";
    return r;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    if (::chdir(dir.c_str()) != 0)
      ::_exit(126);
    ::execl(bin.c_str(), "ubtrace", "--dry-run", name.c_str(),
            static_cast<char *>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out_fd);
  ::close(err_fd);
  r.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out_tmpl);
  r.err = read_file(err_tmpl);
  ::unlink(out_tmpl);
  ::unlink(err_tmpl);
  return r;
}

std::string test_name(const ::testing::TestParamInfo<std::string> &info) {
  std::string n = info.param.substr(0, info.param.size() - 3);
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(c); }, '_');
  return n;
}

class ValidScript : public ::testing::TestWithParam<std::string> {};

TEST_P(ValidScript, FrontEndAcceptsIt) {
  fs::path dir = fs::path(UBTRACE_CORPUS_DIR) / "valid";
  // Imports are relative to the script, as when ubtrace runs it.
  Frontend f;
  f.ctx = std::make_unique<ast::ASTContext>((dir / GetParam()).string(),
                                            read_file(dir / GetParam()));
  f.parsed = parser::parse(*f.ctx);
  f.ok = f.parsed && ast::run_passes(*f.ctx, ast::semantic_passes());
  EXPECT_TRUE(f.ok);
  EXPECT_EQ(f.diags(), "");
}

// codegen_gaps.txt: script name -> why the code generator cannot compile it.
std::map<std::string, std::string> codegen_gaps() {
  std::map<std::string, std::string> gaps;
  std::istringstream in(
      read_file(fs::path(UBTRACE_CORPUS_DIR) / "codegen_gaps.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t space = line.find_first_of(" \t");
    std::string name = line.substr(0, space);
    size_t why = space == std::string::npos
                     ? space
                     : line.find_first_not_of(" \t", space);
    gaps[name] = why == std::string::npos ? "" : line.substr(why);
  }
  return gaps;
}

TEST_P(ValidScript, DryRunSucceeds) {
  Outcome r = run_ubtrace(fs::path(UBTRACE_CORPUS_DIR) / "valid", GetParam());
  auto gaps = codegen_gaps();
  if (auto it = gaps.find(GetParam()); it != gaps.end()) {
    ASSERT_TRUE(r.exit_code != 0 || !r.err.empty())
        << GetParam() << " compiles now: remove it from codegen_gaps.txt";
    GTEST_SKIP() << "known code generator gap: " << it->second;
  }
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

INSTANTIATE_TEST_SUITE_P(Corpus, ValidScript,
                         ::testing::ValuesIn(scripts("valid")), test_name);

class InvalidScript : public ::testing::TestWithParam<std::string> {};

TEST_P(InvalidScript, DryRunFailsWithTheExpectedDiagnostics) {
  fs::path dir = fs::path(UBTRACE_CORPUS_DIR) / "invalid";
  fs::path expected =
      dir / (GetParam().substr(0, GetParam().size() - 3) + ".expected");
  ASSERT_TRUE(fs::exists(expected)) << expected;
  Outcome r = run_ubtrace(dir, GetParam());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, read_file(expected));
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(Corpus, InvalidScript,
                         ::testing::ValuesIn(scripts("invalid")), test_name);

TEST(Corpus, IsLargeEnough) {
  EXPECT_GE(scripts("valid").size() + scripts("invalid").size(), 80u);
  EXPECT_GE(scripts("invalid").size(), 25u);
}

} // namespace
} // namespace ubtrace::test
