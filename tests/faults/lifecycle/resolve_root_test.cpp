// Binaries of a process confined to another root resolve under it
// (binary_resolver.h): given paths, library names in the standard
// directories and LD_LIBRARY_PATH, programs on PATH. The "root" here is a
// directory built by the test with copies of a real ELF library.
#include "runtime/symbols/binary_resolver.h"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ubtrace::runtime::symbols {
namespace {

namespace fs = std::filesystem;

// The fault suite's programs (UBT_FAULT_PROGS; ubt_fault_gtest's
// ENVIRONMENT passes UBTRACE_BUILD_DIR only, the second variable of its
// list is dropped).
fs::path fault_progs() {
  if (const char *p = std::getenv("UBT_FAULT_PROGS"))
    return p;
  const char *build = std::getenv("UBTRACE_BUILD_DIR");
  return fs::path(build ? build : ".") / "tests" / "faults" / "progs";
}

struct Root {
  fs::path dir;
  Root() {
    char tmpl[] = "/tmp/ubt-root-XXXXXX";
    dir = mkdtemp(tmpl);
    fs::create_directories(dir / "lib" / "x86_64-linux-gnu");
    fs::create_directories(dir / "opt" / "libs");
    fs::create_directories(dir / "bin");
    fs::path lib = fault_progs() / "libcalls_back.so";
    fs::copy_file(lib, dir / "lib" / "x86_64-linux-gnu" / "libinroot.so.1");
    fs::copy_file(lib, dir / "opt" / "libs" / "libonpath.so");
    fs::copy_file(fault_progs() / "chrooted", dir / "bin" / "confined");
  }
  ~Root() { fs::remove_all(dir); }
};

TEST(ResolveUnderRoot, PathsNamesAndPrograms) {
  Root root;
  BinaryResolveOptions o;
  o.root = root.dir.string();
  o.ld_library_path = "/opt/libs";
  o.path_env = "/bin";
  auto given = resolve_binary("/lib/x86_64-linux-gnu/libinroot.so.1", o);
  ASSERT_TRUE(given.ok()) << given.error();
  EXPECT_EQ((*given)[0].path, o.root + "/lib/x86_64-linux-gnu/libinroot.so.1");
  auto by_name = resolve_binary("libinroot", o);
  ASSERT_TRUE(by_name.ok()) << by_name.error();
  EXPECT_EQ((*by_name)[0].path,
            o.root + "/lib/x86_64-linux-gnu/libinroot.so.1");
  auto on_path = resolve_binary("libonpath", o);
  ASSERT_TRUE(on_path.ok()) << on_path.error();
  EXPECT_EQ((*on_path)[0].path, o.root + "/opt/libs/libonpath.so");
  auto program = resolve_binary("confined", o);
  ASSERT_TRUE(program.ok()) << program.error();
  EXPECT_EQ((*program)[0].path, o.root + "/bin/confined");
  // Outside the root, the host's files are not the process's.
  o.root.clear();
  EXPECT_FALSE(resolve_binary("/lib/x86_64-linux-gnu/libinroot.so.1", o).ok());
}

TEST(ResolveUnderRoot, OurOwnRootIsNoRoot) {
  EXPECT_EQ(process_root(getpid()), "");
}

} // namespace
} // namespace ubtrace::runtime::symbols
