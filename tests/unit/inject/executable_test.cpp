#include "runtime/inject/executable.h"
#include "tests/unit/inject/test_support.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

namespace fs = std::filesystem;

class ExecutableTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = test::temp_path("bin");
    fs::create_directories(dir_ + "/a");
    fs::create_directories(dir_ + "/b");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string make_file(const std::string &path, const std::string &text,
                        fs::perms perms) {
    std::ofstream(path) << text;
    fs::permissions(path, perms);
    return path;
  }

  std::string dir_;
};

TEST_F(ExecutableTest, SearchesPathInOrder) {
  auto exec = fs::perms::owner_all | fs::perms::group_exec;
  make_file(dir_ + "/b/tool", "#!/bin/sh\n", exec);
  auto found = find_executable("tool", dir_ + "/a:" + dir_ + "/b");
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ(*found, dir_ + "/b/tool");
  make_file(dir_ + "/a/tool", "#!/bin/sh\n", exec);
  EXPECT_EQ(*find_executable("tool", dir_ + "/a:" + dir_ + "/b"),
            dir_ + "/a/tool");
}

TEST_F(ExecutableTest, SkipsNonExecutablesAndDirectories) {
  make_file(dir_ + "/a/tool", "data", fs::perms::owner_read);
  fs::create_directories(dir_ + "/b/tool");
  auto found = find_executable("tool", dir_ + "/a:" + dir_ + "/b");
  ASSERT_FALSE(found.ok());
  // Found but not runnable: execvp says EACCES, so do we.
  EXPECT_EQ(found.error(), "permission denied: " + dir_ + "/a/tool");
}

TEST_F(ExecutableTest, CommandNotFound) {
  auto found = find_executable("no-such-tool-ubt", dir_ + "/a");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error(), "command not found: no-such-tool-ubt");
  auto direct = find_executable(dir_ + "/a/missing", std::nullopt);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error(), "command not found: " + dir_ + "/a/missing");
}

TEST_F(ExecutableTest, NameWithSlashIsNotSearched) {
  auto found = find_executable(test::prog_path("counter_loop"), "/nonexistent");
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ(*found, test::prog_path("counter_loop"));
}

TEST_F(ExecutableTest, EmptyPathEntryIsTheCurrentDirectory) {
  make_file(dir_ + "/a/here", "#!/bin/sh\n", fs::perms::owner_all);
  auto cwd = fs::current_path();
  fs::current_path(dir_ + "/a");
  auto found = find_executable("here", "/nonexistent:");
  fs::current_path(cwd);
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ(*found, "./here");
}

TEST_F(ExecutableTest, UnsetPathUsesTheDefault) {
  auto found = find_executable("sh", std::nullopt);
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_TRUE(*found == "/bin/sh" || *found == "/usr/bin/sh") << *found;
}

TEST_F(ExecutableTest, DynamicProgramsAndScriptsArePreloadable) {
  EXPECT_TRUE(check_preloadable(test::prog_path("counter_loop")).ok());
  auto script = make_file(dir_ + "/a/script", "#!/bin/sh -e\necho hi\n",
                          fs::perms::owner_all);
  auto ok = check_preloadable(script);
  EXPECT_TRUE(ok.ok()) << ok.error();
}

TEST_F(ExecutableTest, StaticProgramsAreNot) {
  if (!UBT_INJECT_HAVE_STATIC)
    GTEST_SKIP() << "no libc.a to link a static program with";
  auto ok = check_preloadable(test::prog_path("static_prog"));
  ASSERT_FALSE(ok.ok());
  EXPECT_EQ(ok.error(), test::prog_path("static_prog") +
                            " is statically linked: the agent is loaded with "
                            "LD_PRELOAD, which needs the dynamic loader");
}

TEST_F(ExecutableTest, ScriptsAreCheckedThroughTheirInterpreter) {
  auto script = make_file(dir_ + "/a/script", "#!/no/such/interpreter\n",
                          fs::perms::owner_all);
  auto ok = check_preloadable(script);
  ASSERT_FALSE(ok.ok());
  EXPECT_EQ(ok.error(), "cannot open /no/such/interpreter: No such file or "
                        "directory");
}

TEST_F(ExecutableTest, NonElfNonScriptIsAnExecFormatError) {
  auto file = make_file(dir_ + "/a/data", "hello", fs::perms::owner_all);
  auto ok = check_preloadable(file);
  ASSERT_FALSE(ok.ok());
  EXPECT_EQ(ok.error(), file + ": exec format error (neither an ELF program "
                               "nor a #! script)");
}

TEST_F(ExecutableTest, SetuidProgramsOfOthersAreRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to give a file to another user";
  std::string copy = dir_ + "/a/suid";
  fs::copy_file(test::prog_path("counter_loop"), copy);
  ASSERT_EQ(::chown(copy.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(copy.c_str(), 04755), 0);
  auto ok = check_preloadable(copy);
  ASSERT_FALSE(ok.ok());
  EXPECT_EQ(ok.error(), copy + " is set-user/group-ID: the dynamic loader "
                               "ignores LD_PRELOAD for it, so the agent "
                               "cannot be loaded (attach with -p instead)");
}

TEST(ElfSharedLibrary, TellsLibrariesFromPrograms) {
  // glibc's libc.so.6 runs too (it has an interpreter) and is a library
  // (its soname); a library without a soname has no interpreter.
  auto libc = elf_shared_library("/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_TRUE(libc.ok()) << libc.error();
  EXPECT_TRUE(*libc);
  auto agent = elf_shared_library(test::test_agent_path());
  ASSERT_TRUE(agent.ok()) << agent.error();
  EXPECT_TRUE(*agent);
  auto program = elf_shared_library(test::prog_path("sleeper"));
  ASSERT_TRUE(program.ok()) << program.error();
  EXPECT_FALSE(*program);
  std::string fixed = test::prog_path("static_prog");
  if (::access(fixed.c_str(), F_OK) == 0) {
    auto static_prog = elf_shared_library(fixed);
    ASSERT_TRUE(static_prog.ok()) << static_prog.error();
    EXPECT_FALSE(*static_prog);
  }
  EXPECT_FALSE(elf_shared_library("/etc/hostname").ok());
}

} // namespace
} // namespace ubtrace::runtime::inject
