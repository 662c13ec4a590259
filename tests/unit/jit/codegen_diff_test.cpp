// Real codegen output: one-liners compiled by the front end in this
// process, their host programs run in both engines against real maps laid
// out from the bundle's specifications (as the CLI's session does): every
// run's r0 and the final maps and events must match.
#include "runtime/abi.h"
#include "runtime/vm/loader.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/region_maps.h"
#include "tests/unit/jit/script_bundle.h"

#include <gtest/gtest.h>
#include <random>

namespace ubtrace::jit::test {
namespace {

const char *const kScripts[] = {
    "uprobe:/bin/sh:main { @c = count(); }",
    "uprobe:/bin/sh:main { @h = hist(arg0); }",
    "uprobe:/bin/sh:main { @[tid] = count(); }",
    "uprobe:/bin/sh:main { @s = sum(arg1); @mn = min(arg0); @mx = max(arg0); "
    "@a = avg(arg2); @st = stats(arg1); }",
    "uprobe:/bin/sh:main { @l = lhist(arg0 % 150, 0, 100, 10); }",
    "uprobe:/bin/sh:main { @x[arg0 % 10, arg1 % 3] = count(); }",
    "uprobe:/bin/sh:main { if (arg0 > 1000) { @big = count(); } "
    "else { @small[arg0 % 7] = sum(arg1); } }",
    "uprobe:/bin/sh:main { @last[arg0 % 5] = arg1; @k = arg0 * 3 + (arg1 >> 2) "
    "^ arg2; }",
    "uprobe:/bin/sh:main { printf(\"%d %u\\n\", arg0, arg1); }",
    "uprobe:/bin/sh:main { @m[comm] = count(); @p[probe] = count(); }",
    "uprobe:/bin/sh:main { $x = arg0 & 0xffff; $n = 0; "
    "unroll(8) { if ($x > 1) { $x = $x / 2; $n++; } } @steps[$n] = count(); }",
    "uprobe:/bin/sh:main { @d[arg0 % 4] = count(); if (arg1 % 3 == 0) { "
    "delete(@d[arg0 % 4]); } }",
};

abi::HostProbeCtx probe_ctx(std::mt19937_64 &rng, int i) {
  abi::HostProbeCtx ctx{};
  uint64_t *regs = reinterpret_cast<uint64_t *>(&ctx.regs);
  for (int r = 0; r < 21; ++r)
    regs[r] = i < 4 ? uint64_t(i * 1000 + r) : rng() >> (rng() % 64);
  ctx.probe_id = 0;
  ctx.func_ip = 0x401000;
  return ctx;
}

class CodegenDiff : public testing::TestWithParam<const char *> {};

TEST_P(CodegenDiff, SameResultsAndMaps) {
  auto bundle = compile_script(GetParam());
  ASSERT_TRUE(bundle) << bundle.error();
  auto object = vm::load_object(bundle->object);
  ASSERT_TRUE(object) << object.error();
  auto interp_maps = RegionMaps::for_bundle(*bundle, *object);
  auto jit_maps = RegionMaps::for_bundle(*bundle, *object);
  auto fresh = RegionMaps::for_bundle(*bundle, *object);
  ASSERT_TRUE(interp_maps && jit_maps && fresh);
  const vm::HelperImpls &helpers = region_helpers();

  size_t programs = 0;
  std::mt19937_64 rng(11);
  for (const runtime::ProbeSpec &probe : bundle->probes) {
    const vm::Program *prog = nullptr;
    for (const vm::Program &p : object->programs)
      if (p.section == probe.section)
        prog = &p;
    ASSERT_NE(prog, nullptr) << probe.section;
    auto verified =
        vm::verify(*prog, object->maps, host_helper_protos(),
                   vm::ContextInfo{abi::kHostCtxSize, false, false});
    ASSERT_TRUE(verified) << verified.error();
    auto bound = vm::bind_program(*verified, interp_maps->bindings(), helpers);
    ASSERT_TRUE(bound) << bound.error();
    auto compiled = engine().compile(*verified, jit_maps->bindings(), helpers);
    ASSERT_TRUE(compiled) << compiled.error();
    ++programs;
    for (int i = 0; i < 200; ++i) {
      abi::HostProbeCtx a = probe_ctx(rng, i), b = a;
      vm::RunResult r = vm::run(*bound, &a);
      ASSERT_EQ(r.status, vm::RunStatus::Ok);
      uint64_t r0 = (*compiled)->run(&b);
      ASSERT_EQ(r0, r.r0) << "run " << i;
    }
  }
  ASSERT_GT(programs, 0u);
  std::string want = interp_maps->dump();
  EXPECT_EQ(jit_maps->dump(), want);
  EXPECT_NE(fresh->dump(), want) << "the program changed nothing";
}

INSTANTIATE_TEST_SUITE_P(OneLiners, CodegenDiff, testing::ValuesIn(kScripts));

} // namespace
} // namespace ubtrace::jit::test
