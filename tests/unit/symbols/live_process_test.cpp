// Load-address arithmetic checked against live processes: the run-time
// address computed from a probe's file offset (and from bias + vaddr) must
// be the address the program prints for its own function.
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/probe_resolver.h"
#include "tests/unit/symbols/test_support.h"

#include <dlfcn.h>
#include <filesystem>
#include <gtest/gtest.h>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::Child;
using ubtrace::symbols_test::parse_addresses;
using ubtrace::symbols_test::prog;

namespace {

ResolvedProbe resolve_one(ProbeResolver &resolver, const std::string &target,
                          const std::string &function,
                          std::optional<pid_t> pid = {}) {
  AttachRequest req;
  req.target = target;
  req.function = function;
  req.pid = pid;
  auto probes = resolver.expand(req);
  EXPECT_TRUE(probes) << (probes ? "" : probes.error());
  EXPECT_EQ(probes ? probes->size() : 0u, 1u) << function;
  return probes && !probes->empty() ? (*probes)[0] : ResolvedProbe{};
}

void check_program(const std::string &name, bool pie) {
  SCOPED_TRACE(name);
  const std::string path = prog(name);
  Child child(path);
  ASSERT_TRUE(child.started());
  auto printed = parse_addresses(child.read_until_ready());
  auto space = AddressSpace::snapshot(child.pid());
  ASSERT_TRUE(space) << space.error();
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf);
  auto bias = space->load_bias(path, *elf);
  ASSERT_TRUE(bias);
  if (pie)
    EXPECT_NE(*bias, 0u);
  else
    EXPECT_EQ(*bias, 0u);

  ProbeResolver resolver;
  int checked = 0;
  for (const char *fn :
       {"ubt_add", "ubt_static_helper", "ubt_alias_target", "ubt_alias",
        "ubt_read_one", "ubt_read_two", "ubt_reader", "main"}) {
    ResolvedProbe p = resolve_one(resolver, path, fn);
    ASSERT_TRUE(printed.count(fn)) << fn;
    auto runtime = space->runtime_address(path, p.file_offset);
    ASSERT_TRUE(runtime) << fn;
    EXPECT_EQ(*runtime, printed[fn]) << fn;
    EXPECT_EQ(*bias + p.vaddr, printed[fn]) << fn;
    if (!pie)
      EXPECT_EQ(p.vaddr, printed[fn]) << fn;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
  child.finish();
}

} // namespace

TEST(LiveProcess, PieAddresses) {
  check_program("symtest_pie", true);
}
TEST(LiveProcess, NonPieAddresses) {
  check_program("symtest_nopie", false);
}

TEST(LiveProcess, SharedLibraryAddresses) {
  Child child(prog("symtest_lib"));
  ASSERT_TRUE(child.started());
  auto printed = parse_addresses(child.read_until_ready());
  auto space = AddressSpace::snapshot(child.pid());
  ASSERT_TRUE(space);
  ProbeResolver resolver;
  for (const char *fn : {"ubt_lib_func", "ubt_lib_other"}) {
    // The library by name, found in the process's mappings.
    ResolvedProbe p = resolve_one(resolver, "libubtsym", fn, child.pid());
    auto runtime = space->runtime_address(p.binary, p.file_offset);
    ASSERT_TRUE(runtime) << fn;
    EXPECT_EQ(*runtime, printed[fn]) << fn;
  }
  child.finish();
}

TEST(LiveProcess, LibcOfThisProcess) {
  // The test itself is a live process: libc's malloc, as the dynamic
  // linker resolves it, against what the resolver computes.
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (!libc)
    GTEST_SKIP() << "libc.so.6 is not loaded here";
  auto real = reinterpret_cast<uint64_t>(dlsym(libc, "malloc"));
  dlclose(libc);
  ASSERT_NE(real, 0u);
  ProbeResolver resolver;
  ResolvedProbe p = resolve_one(resolver, "libc", "malloc", ::getpid());
  auto space = AddressSpace::snapshot(::getpid());
  ASSERT_TRUE(space);
  EXPECT_EQ(space->runtime_address(p.binary, p.file_offset), real);
}

TEST(LiveProcess, PidWithoutBinary) {
  // uprobe with -p and no binary: the process's executable.
  Child child(prog("symtest_nopie"));
  ASSERT_TRUE(child.started());
  auto printed = parse_addresses(child.read_until_ready());
  ProbeResolver resolver;
  ResolvedProbe p = resolve_one(resolver, "", "ubt_add", child.pid());
  EXPECT_EQ(p.binary, std::filesystem::canonical(prog("symtest_nopie")));
  EXPECT_EQ(p.vaddr, printed["ubt_add"]);
  child.finish();

  // usdt with -p and no binary: every file the process maps.
  Child usdt(prog("usdt_pie"));
  ASSERT_TRUE(usdt.started());
  usdt.read_until_ready();
  AttachRequest req;
  req.type = UserProbeType::Usdt;
  req.function = "twice";
  req.pid = usdt.pid();
  auto probes = resolver.expand(req);
  ASSERT_TRUE(probes) << probes.error();
  EXPECT_EQ(probes->size(), 2u);
  usdt.finish();
}
