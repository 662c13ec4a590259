#include "runtime/symbols/binary_resolver.h"
#include "runtime/symbols/ld_cache.h"
#include "tests/unit/symbols/test_support.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::Child;
using ubtrace::symbols_test::prog;
using ubtrace::symbols_test::run_command;

namespace {

// ldconfig's own answer for a soname on this machine's ABI.
std::optional<std::string> ldconfig_path(const std::string &soname) {
  auto out = run_command({"ldconfig", "-p"});
  if (out.status != 0)
    return std::nullopt;
  for (const auto &e : parse_ldconfig_output(out.out))
    if (e.soname == soname && ld_cache_entry_is_native(e))
      return e.path;
  return std::nullopt;
}

} // namespace

TEST(LdCache, BinaryCacheAgreesWithLdconfig) {
  auto cache = read_ld_cache();
  if (!cache)
    GTEST_SKIP() << cache.error();
  auto out = run_command({"ldconfig", "-p"});
  ASSERT_EQ(out.status, 0);
  auto text = parse_ldconfig_output(out.out);
  ASSERT_FALSE(text.empty());
  // Same entries, same order (ldconfig -p prints the cache as stored).
  ASSERT_EQ(cache->size(), text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    EXPECT_EQ((*cache)[i].soname, text[i].soname) << i;
    EXPECT_EQ((*cache)[i].path, text[i].path) << i;
    EXPECT_EQ(ld_cache_entry_is_native((*cache)[i]),
              ld_cache_entry_is_native(text[i]))
        << text[i].soname;
  }
}

TEST(LdCache, RejectsGarbage) {
  EXPECT_FALSE(parse_ld_cache({'x', 'y'}));
  std::vector<uint8_t> truncated(20, 0);
  std::string magic = "glibc-ld.so.cache1.1";
  std::copy(magic.begin(), magic.end(), truncated.begin());
  EXPECT_FALSE(parse_ld_cache(truncated));
}

TEST(LibraryNames, MatchLikeTheLoader) {
  EXPECT_TRUE(library_name_matches("libc", "libc.so.6"));
  EXPECT_TRUE(library_name_matches("libc", "/usr/lib/libc-2.31.so"));
  EXPECT_TRUE(library_name_matches("libc.so.6", "/lib/x86_64/libc.so.6"));
  EXPECT_FALSE(library_name_matches("libc", "libcrypt.so.1"));
  EXPECT_FALSE(library_name_matches("libc", "libc-client.so"));
  EXPECT_TRUE(library_name_matches("libssl", "libssl.so.3"));
  EXPECT_FALSE(library_name_matches("libssl", "libssl3.so"));
  EXPECT_TRUE(library_name_matches("libssl.so", "libssl.so.3"));
  EXPECT_FALSE(library_name_matches("libssl.so.3", "libssl.so.30"));
  EXPECT_TRUE(looks_like_library("libc"));
  EXPECT_TRUE(looks_like_library("ld-linux-x86-64.so.2"));
  EXPECT_FALSE(looks_like_library("bash"));
  EXPECT_FALSE(looks_like_library("./libc"));
}

TEST(ResolveBinary, LibrariesThroughTheCache) {
  for (auto [name, soname] :
       {std::pair{"libc", "libc.so.6"}, std::pair{"libc.so.6", "libc.so.6"},
        std::pair{"libpthread", "libpthread.so.0"},
        std::pair{"libm", "libm.so.6"}}) {
    auto expected = ldconfig_path(soname);
    if (!expected)
      continue;
    auto found = resolve_binary(name);
    ASSERT_TRUE(found) << name << ": " << found.error();
    ASSERT_EQ(found->size(), 1u) << name;
    EXPECT_EQ((*found)[0].path, *expected) << name;
    EXPECT_EQ((*found)[0].source, BinarySource::LdCache) << name;
  }
  if (!ldconfig_path("libc.so.6"))
    GTEST_SKIP() << "no libc.so.6 in ldconfig -p";
}

TEST(ResolveBinary, LibsslTakesTheFirstCacheEntry) {
  // "libssl" means whatever libssl.so.* ld.so.cache lists first.
  auto out = run_command({"ldconfig", "-p"});
  std::optional<std::string> first;
  for (const auto &e : parse_ldconfig_output(out.out))
    if (ld_cache_entry_is_native(e) && library_name_matches("libssl", e.soname))
      if (!first)
        first = e.path;
  if (!first)
    GTEST_SKIP() << "libssl is not installed";
  auto found = resolve_binary("libssl");
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ((*found)[0].path, *first);
}

TEST(ResolveBinary, MissingLibrarySaysWhereItLooked) {
  auto found = resolve_binary("libubtrace_no_such_lib");
  ASSERT_FALSE(found);
  EXPECT_NE(
      found.error().find("no binary or library named 'libubtrace_no_such_lib'"),
      std::string::npos)
      << found.error();
  EXPECT_NE(found.error().find("/etc/ld.so.cache"), std::string::npos);
  EXPECT_NE(found.error().find("PATH"), std::string::npos);
}

TEST(ResolveBinary, ProgramsOnPath) {
  auto which = run_command({"sh", "-c", "command -v bash"});
  if (which.status != 0)
    GTEST_SKIP() << "no bash on PATH";
  std::string expected = which.out.substr(0, which.out.find('\n'));
  auto found = resolve_binary("bash");
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ((*found)[0].path, expected);
  EXPECT_EQ((*found)[0].source, BinarySource::SearchPath);

  BinaryResolveOptions options;
  options.path_env = std::string(UBT_SYMBOLS_PROGS);
  auto ours = resolve_binary("symtest_pie", options);
  ASSERT_TRUE(ours) << ours.error();
  EXPECT_EQ((*ours)[0].path, prog("symtest_pie"));
}

TEST(ResolveBinary, PathsAreKeptAsWritten) {
  namespace fs = std::filesystem;
  std::string relative =
      fs::relative(prog("symtest_pie"), fs::current_path()).string();
  if (relative.find('/') == std::string::npos)
    relative = "./" + relative;
  auto found = resolve_binary(relative);
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ((*found)[0].path, relative);
  EXPECT_EQ((*found)[0].source, BinarySource::GivenPath);

  auto not_elf = resolve_binary("/etc/passwd");
  ASSERT_FALSE(not_elf);
  EXPECT_NE(not_elf.error().find("is not an executable or library"),
            std::string::npos);
}

TEST(ResolveBinary, Globs) {
  auto found = resolve_binary(prog("symtest_[pn]*"));
  ASSERT_TRUE(found) << found.error();
  std::vector<std::string> paths;
  for (const auto &b : *found)
    paths.push_back(b.path);
  EXPECT_EQ(paths, (std::vector<std::string>{prog("symtest_nopie"),
                                             prog("symtest_pie")}));
  EXPECT_FALSE(resolve_binary(prog("no_such_*")));
}

TEST(ResolveBinary, ProcessMapsWinForALiveProcess) {
  Child child(prog("symtest_lib"));
  ASSERT_TRUE(child.started());
  child.read_until_ready();
  // Not in ld.so.cache or a standard directory: only the process knows.
  BinaryResolveOptions no_env;
  no_env.ld_library_path = "";
  EXPECT_FALSE(resolve_binary("libubtsym", no_env));

  BinaryResolveOptions with_pid = no_env;
  with_pid.pid = child.pid();
  auto found = resolve_binary("libubtsym", with_pid);
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ((*found)[0].source, BinarySource::ProcessMaps);
  EXPECT_EQ(std::filesystem::canonical((*found)[0].path),
            std::filesystem::canonical(prog("libubtsym.so")));

  // libc of the process: what it maps, even when the cache names a path
  // through a symlink.
  auto libc = resolve_binary("libc", with_pid);
  ASSERT_TRUE(libc) << libc.error();
  EXPECT_EQ((*libc)[0].source, BinarySource::ProcessMaps);

  // "*": every probeable file it maps.
  auto all = resolve_binary("*", with_pid);
  ASSERT_TRUE(all) << all.error();
  EXPECT_GE(all->size(), 3u); // the program, libubtsym, libc, ld.so

  BinaryResolveOptions ld_path = no_env;
  ld_path.ld_library_path = std::string(UBT_SYMBOLS_PROGS);
  auto via_env = resolve_binary("libubtsym", ld_path);
  ASSERT_TRUE(via_env) << via_env.error();
  EXPECT_EQ((*via_env)[0].source, BinarySource::LdLibraryPath);
  child.finish();
}
