// PTX probe injection on real modules: the PTX of every nvcc-built fixture
// and a hand-written module with the exit shapes nvcc seldom emits. The
// rewritten PTX must satisfy ptxas and nvJitLink; FileCheck checks where
// the calls sit.
#include "gpu_test_support.h"
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/ptx_inject.h"

#include <set>

namespace ubtrace::gpu_test {
namespace {

using namespace runtime::gpu;

std::string module_ptx(const Fixture &f) {
  std::vector<uint8_t> file = read_file(f.path);
  auto found = find_elf_fatbins(file);
  EXPECT_TRUE(found) << found.error();
  if (!found)
    return "";
  for (const ElfFatbin &fb : found->fatbins)
    for (const FatbinEntry &e : fb.fatbin.entries)
      if (e.kind == EntryKind::Ptx) {
        auto ptx = entry_ptx(e);
        EXPECT_TRUE(ptx) << ptx.error();
        return ptx ? *ptx : "";
      }
  ADD_FAILURE() << f.name() << " has no PTX";
  return "";
}

std::string fixture_ptx(const std::string &app, const std::string &variant) {
  for (const Fixture &f : fixtures())
    if (f.app == app && f.variant == variant && f.runtime == "static")
      return module_ptx(f);
  ADD_FAILURE() << "no fixture " << app << " " << variant;
  return "";
}

std::string probes_ptx() {
  return read_text(fixtures_dir() + "/probes.ptx");
}

std::string source_ptx(const std::string &name) {
  return read_text(test_sources_dir() + "/ptx/" + name);
}

// Every probe of probes.cu on every kernel: entry and exit, with and
// without a context.
ProbeProgram all_probes(const std::string &pattern = "*") {
  ProbeProgram program;
  program.ptx = probes_ptx();
  program.attachments = {
      {ProbeSite::Entry, pattern, "__ubt_probe_count"},
      {ProbeSite::Entry, pattern, "__ubt_probe_args"},
      {ProbeSite::Exit, pattern, "__ubt_probe_timestamp"},
      {ProbeSite::Exit, pattern, "__ubt_probe_bare"},
  };
  return program;
}

void expect_ptxas_accepts(std::string_view ptx, const std::string &what) {
  CommandResult r = run_ptxas(ptx);
  EXPECT_EQ(r.status, 0) << what << ": ptxas rejected the rewritten PTX:\n"
                         << r.output;
}

void expect_filecheck(std::string_view ptx, std::string_view checks) {
  if (filecheck_path().empty()) {
    GTEST_SKIP() << "FileCheck not found (" << UBT_FILECHECK << ")";
  }
  CommandResult r = filecheck(ptx, checks);
  EXPECT_EQ(r.status, 0) << r.output;
}

size_t count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

TEST(GpuInject, EveryFixtureKernelGetsEntryAndExitProbesPtxasAccepts) {
  UBT_REQUIRE_FIXTURES();
  if (cuda_tool("ptxas").empty())
    GTEST_SKIP() << "ptxas not found";
  ProbeProgram program = all_probes();
  std::set<ContentHash> assembled;
  size_t kernels = 0;
  for (const Fixture &f : fixtures()) {
    SCOPED_TRACE(f.name());
    std::string ptx = module_ptx(f);
    auto parsed = parse_ptx(ptx);
    ASSERT_TRUE(parsed) << parsed.error();
    size_t entries = 0;
    for (const PtxFunction &fn : parsed->functions)
      entries += fn.is_entry && fn.has_body;
    auto result = inject_probes(ptx, program);
    ASSERT_TRUE(result) << result.error();
    ASSERT_EQ(result->kernels.size(), entries);
    for (const InstrumentedKernel &k : result->kernels) {
      EXPECT_EQ(k.entry_calls, 2u) << k.name;
      EXPECT_GE(k.exit_sites, 1u) << k.name;
      EXPECT_EQ(k.exit_calls, 2 * k.exit_sites) << k.name;
      EXPECT_EQ(k.kernel_id, fnv1a64(k.name));
    }
    kernels += result->kernels.size();
    // The same PTX comes out of several variants: assemble each once.
    if (assembled
            .insert(
                hash_content(as_bytes(result->ptx.data(), result->ptx.size())))
            .second)
      expect_ptxas_accepts(result->ptx, f.name());
  }
  // vector_add, matmul, param_types: one kernel each; multi_kernel: five.
  EXPECT_EQ(kernels, 8u * (1 + 1 + 1) + 8u * 5 + 2u * 5);
  // One module per app, plus multi_kernel's -lineinfo and -G builds.
  EXPECT_EQ(assembled.size(), 6u);
}

TEST(GpuInject, RewrittenFixturePtxLinksWithNvJitLink) {
  UBT_REQUIRE_FIXTURES();
  std::string why;
  if (!nvjitlink_available(&why))
    GTEST_SKIP() << why;
  for (const char *app :
       {"vector_add", "matmul", "param_types", "multi_kernel"}) {
    SCOPED_TRACE(app);
    auto result = inject_probes(fixture_ptx(app, "default"), all_probes());
    ASSERT_TRUE(result) << result.error();
    LinkResult link = nvjitlink(
        as_bytes(result->ptx.data(), result->ptx.size()), LinkInput::Ptx);
    ASSERT_TRUE(link.ok) << link.log;
    std::vector<std::string> symbols = elf_function_symbols(link.cubin);
    std::set<std::string> names(symbols.begin(), symbols.end());
    for (const InstrumentedKernel &k : result->kernels)
      EXPECT_TRUE(names.count(k.name)) << k.name << " missing from the cubin";
  }
}

TEST(GpuInject, VectorAddCallsSitBeforeTheFirstInstructionAndTheRet) {
  UBT_REQUIRE_FIXTURES();
  auto result =
      inject_probes(fixture_ptx("vector_add", "default"), all_probes());
  ASSERT_TRUE(result) << result.error();
  expect_filecheck(result->ptx, R"(
CHECK: .version 9.0
CHECK: // ubtrace: probe functions and globals
CHECK: .visible .global .align 8 .b8 __ubt_map_count[512];
CHECK-NOT: .visible .func
CHECK: .func __ubt_probe_count(
CHECK: // ubtrace: end of probes
CHECK-LABEL: .entry _Z10vector_addPKfS0_Pfi(
CHECK: {
CHECK-NEXT: .local .align 8 .b8 __ubt_ctx[48];
CHECK: .reg .b64 %rd<11>;
CHECK-NOT: ld.param.u64 %rd1
CHECK: { // ubtrace: kernel entry probes
CHECK-NEXT: .reg .b64 %ubt_v;
CHECK-NEXT: mov.u64 %ubt_v, 0x{{[0-9a-f]+}};
CHECK-NEXT: st.local.u64 [__ubt_ctx+0], %ubt_v;
CHECK-NEXT: mov.u64 %ubt_v, 0x0000000000000004;
CHECK-NEXT: st.local.u64 [__ubt_ctx+8], %ubt_v;
CHECK-NEXT: ld.param.u64 %ubt_v, [_Z10vector_addPKfS0_Pfi_param_0];
CHECK-NEXT: st.local.u64 [__ubt_ctx+16], %ubt_v;
CHECK: ld.param.u32 %ubt_v, [_Z10vector_addPKfS0_Pfi_param_3];
CHECK-NEXT: st.local.u64 [__ubt_ctx+40], %ubt_v;
CHECK-NEXT: mov.u64 %ubt_v, __ubt_ctx;
CHECK-NEXT: cvta.local.u64 %ubt_v, %ubt_v;
CHECK: call __ubt_probe_count, (__ubt_arg);
CHECK: call __ubt_probe_args, (__ubt_arg);
CHECK-NEXT: }
CHECK-NEXT: }
CHECK-NEXT: ld.param.u64 %rd1, [_Z10vector_addPKfS0_Pfi_param_0];
CHECK: @%p1 bra $L__BB0_2;
CHECK-NOT: ubtrace
CHECK: $L__BB0_2:
CHECK-NEXT: { // ubtrace: kernel exit probes
CHECK: mov.u64 %ubt_v, 0x0000000100000004;
CHECK: call __ubt_probe_timestamp, (__ubt_arg);
CHECK: call __ubt_probe_bare;
CHECK-NEXT: }
CHECK-NEXT: ret;
CHECK-EMPTY:
CHECK-NEXT: }
)");
}

TEST(GpuInject, ParamTypesWidenEachParameterByItsType) {
  UBT_REQUIRE_FIXTURES();
  auto result =
      inject_probes(fixture_ptx("param_types", "default"), all_probes());
  ASSERT_TRUE(result) << result.error();
  // int, float (raw bits), pointer, struct by value (its address in
  // parameter space), long long.
  expect_filecheck(result->ptx, R"(
CHECK-LABEL: .entry _Z12mixed_paramsifPf4Pairx(
CHECK: .local .align 8 .b8 __ubt_ctx[56];
CHECK: { // ubtrace: kernel entry probes
CHECK: mov.u64 %ubt_v, 0x0000000000000005;
CHECK: ld.param.u32 %ubt_v, [_Z12mixed_paramsifPf4Pairx_param_0];
CHECK-NEXT: st.local.u64 [__ubt_ctx+16], %ubt_v;
CHECK-NEXT: ld.param.b32 %ubt_v, [_Z12mixed_paramsifPf4Pairx_param_1];
CHECK-NEXT: st.local.u64 [__ubt_ctx+24], %ubt_v;
CHECK-NEXT: ld.param.u64 %ubt_v, [_Z12mixed_paramsifPf4Pairx_param_2];
CHECK-NEXT: st.local.u64 [__ubt_ctx+32], %ubt_v;
CHECK-NEXT: mov.u64 %ubt_v, _Z12mixed_paramsifPf4Pairx_param_3;
CHECK-NEXT: cvta.param.u64 %ubt_v, %ubt_v;
CHECK-NEXT: st.local.u64 [__ubt_ctx+40], %ubt_v;
CHECK-NEXT: ld.param.u64 %ubt_v, [_Z12mixed_paramsifPf4Pairx_param_4];
CHECK-NEXT: st.local.u64 [__ubt_ctx+48], %ubt_v;
CHECK: call __ubt_probe_args, (__ubt_arg);
CHECK-NEXT: }
CHECK-NEXT: }
CHECK-NEXT: ld.param.u32 %r3, [_Z12mixed_paramsifPf4Pairx_param_0];
)");
}

TEST(GpuInject, ArgMaskLoadsOnlyTheParametersAsked) {
  UBT_REQUIRE_FIXTURES();
  ProbeProgram program;
  program.ptx = probes_ptx();
  program.attachments = {
      {ProbeSite::Entry, "*", "__ubt_probe_args", uint64_t{1} << 1}};
  auto result = inject_probes(fixture_ptx("param_types", "default"), program);
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(count(result->ptx, "%ubt_v, [_Z12mixed_paramsifPf4Pairx_param_"),
            1u);
  EXPECT_EQ(count(result->ptx, "ld.param.b32 %ubt_v, "
                               "[_Z12mixed_paramsifPf4Pairx_param_1]"),
            1u);
  expect_ptxas_accepts(result->ptx, "arg mask");
}

TEST(GpuInject, MultiKernelExitInsideInlineAsmScopeKeepsItsPredicate) {
  UBT_REQUIRE_FIXTURES();
  auto result =
      inject_probes(fixture_ptx("multi_kernel", "default"), all_probes());
  ASSERT_TRUE(result) << result.error();
  expect_filecheck(result->ptx, R"(
CHECK-LABEL: .entry early_exit(
CHECK: { // ubtrace: kernel entry probes
CHECK: call __ubt_probe_args, (__ubt_arg);
CHECK-NEXT: }
CHECK-NEXT: }
CHECK-NEXT: ld.param.u64 %rd1, [early_exit_param_0];
CHECK: .reg .pred past;
CHECK-NEXT: setp.ge.s32 past, %r1, %r2;
CHECK-NEXT: { // ubtrace: kernel exit probes
CHECK: mov.u64 %ubt_v, 0x0000000100000002;
CHECK: @past call __ubt_probe_timestamp, (__ubt_arg);
CHECK: @past call __ubt_probe_bare;
CHECK-NEXT: }
CHECK-NEXT: @past exit;
CHECK-NEXT: }
CHECK: neg.s32
CHECK: { // ubtrace: kernel exit probes
CHECK-NOT: @
CHECK: call __ubt_probe_bare;
CHECK-NEXT: }
CHECK-NEXT: ret;
CHECK-LABEL: .func (.param .b32 func_retval0) _ZN11ubt_samples13collatz_stepsEj(
CHECK-NOT: ubtrace
CHECK: ret;
CHECK-EMPTY:
CHECK-NEXT: }
)");
}

TEST(GpuInject, DemangledAndMangledPatternsSelectKernels) {
  UBT_REQUIRE_FIXTURES();
  std::string ptx = fixture_ptx("multi_kernel", "default");
  struct Case {
    const char *pattern;
    std::set<std::string> kernels;
  };
  const std::string scale_f = "_ZN11ubt_samples12scale_kernelIfEEvPT_S1_i";
  const std::string scale_d = "_ZN11ubt_samples12scale_kernelIdEEvPT_S1_i";
  const std::string collatz = "_ZN11ubt_samples7collatzEPii";
  std::vector<Case> cases = {
      {"fill_c", {"fill_c"}},
      {"ubt_samples::scale_kernel<float>", {scale_f}},
      {"*scale_kernel*", {scale_f, scale_d}},
      {"void ubt_samples::scale_kernel<double>(double*, double, int)",
       {scale_d}},
      {"_ZN11ubt_samples7collatzEPii", {collatz}},
      {"ubt_samples::collatz(int*, int)", {collatz}},
      {"ubt_samples::*", {scale_f, scale_d, collatz}},
      {"collatz_steps", {}}, // a device function, not a kernel
      {"nothing*", {}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.pattern);
    auto result = inject_probes(ptx, all_probes(c.pattern));
    ASSERT_TRUE(result) << result.error();
    std::set<std::string> got;
    for (const InstrumentedKernel &k : result->kernels)
      got.insert(k.name);
    EXPECT_EQ(got, c.kernels);
    if (c.kernels.empty())
      EXPECT_EQ(result->ptx, ptx) << "no match must leave the module as is";
  }
}

TEST(GpuInject, DebugBuildsStillAssemble) {
  UBT_REQUIRE_FIXTURES();
  for (const char *variant : {"lineinfo", "G"}) {
    SCOPED_TRACE(variant);
    std::string ptx = fixture_ptx("multi_kernel", variant);
    auto result = inject_probes(ptx, all_probes());
    ASSERT_TRUE(result) << result.error();
    EXPECT_EQ(result->kernels.size(), 5u);
    // The module's debug sections and .file table survive untouched.
    EXPECT_EQ(count(result->ptx, ".section"), count(ptx, ".section"));
    EXPECT_EQ(count(result->ptx, ".file"), count(ptx, ".file"));
    expect_ptxas_accepts(result->ptx, variant);
  }
}

TEST(GpuInject, HandWrittenExitsAreAllGuardedLikeTheirExit) {
  UBT_REQUIRE_FIXTURES();
  std::string ptx = source_ptx("predicated_exits.ptx");
  expect_ptxas_accepts(ptx, "the hand-written module itself");
  auto result = inject_probes(ptx, all_probes());
  ASSERT_TRUE(result) << result.error();
  ASSERT_EQ(result->kernels.size(), 1u);
  EXPECT_EQ(result->kernels[0].exit_sites, 4u);
  // The probes need ISA 9.0: the module's 8.0 is raised.
  EXPECT_EQ(result->version_major, 9u);
  EXPECT_EQ(result->version_minor, 0u);
  expect_ptxas_accepts(result->ptx, "predicated_exits");
  expect_filecheck(result->ptx, R"(
CHECK: .version 9.0
CHECK-LABEL: .func (.param .b32 twice_ret) twice(
CHECK-NOT: ubtrace
CHECK: ret;
CHECK-LABEL: .entry guarded_exits(
CHECK: .maxntid 256, 1, 1
CHECK: .reg .f64 %fd<3>;
CHECK: { // ubtrace: kernel entry probes
CHECK: mov.u64 %ubt_v, 0x0000000000000003;
CHECK: ld.param.b64 %ubt_v, [guarded_exits_scale];
CHECK: call __ubt_probe_args, (__ubt_arg);
CHECK-NEXT: }
CHECK-NEXT: }
CHECK-NEXT: $L_top:
CHECK: setp.ge.u32 %p1, %r1, %r2;
CHECK-NEXT: { // ubtrace: kernel exit probes
CHECK: @%p1 call __ubt_probe_timestamp, (__ubt_arg);
CHECK: @%p1 call __ubt_probe_bare;
CHECK-NEXT: }
CHECK-NEXT: @%p1 ret;
CHECK: @!%p2 bra $L_store;
CHECK: setp.eq.u32 %q, %r2, 4;
CHECK-NEXT: { // ubtrace: kernel exit probes
CHECK: @%q call __ubt_probe_bare;
CHECK-NEXT: }
CHECK-NEXT: @%q exit;
CHECK: call.uni (ret0), twice, (arg0);
CHECK-NOT: ubtrace
CHECK: setp.eq.u32 %p3, %r1, 0;
CHECK-NEXT: { // ubtrace: kernel exit probes
CHECK: @!%p3 call __ubt_probe_bare;
CHECK-NEXT: }
CHECK-NEXT: @!%p3 exit;
CHECK-NEXT: { // ubtrace: kernel exit probes
CHECK-NOT: @
CHECK: call __ubt_probe_bare;
CHECK-NEXT: }
CHECK-NEXT: ret;
)");
}

TEST(GpuInject, ClashingProbeNamesAreRenamedAndCalledByTheNewName) {
  UBT_REQUIRE_FIXTURES();
  ProbeProgram program;
  program.ptx = read_text(fixtures_dir() + "/clash_probe.ptx");
  program.attachments = {{ProbeSite::Entry, "*", "early_exit"},
                         {ProbeSite::Exit, "*", "early_exit"}};
  auto result = inject_probes(fixture_ptx("multi_kernel", "default"), program);
  ASSERT_TRUE(result) << result.error();
  std::map<std::string, std::string> renamed(result->renamed.begin(),
                                             result->renamed.end());
  EXPECT_EQ(renamed.size(), 2u);
  EXPECT_EQ(renamed["early_exit"], "early_exit_ubt0");
  EXPECT_EQ(renamed["fill_c"], "fill_c_ubt0");
  expect_ptxas_accepts(result->ptx, "clash_probe");
  expect_filecheck(result->ptx, R"(
CHECK: .visible .global .align 8 .b8 fill_c_ubt0[32];
CHECK: .func early_exit_ubt0(
CHECK: mov.u64 %rd{{[0-9]+}}, fill_c_ubt0;
CHECK: // ubtrace: end of probes
CHECK: .entry fill_c(
CHECK: call early_exit_ubt0, (__ubt_arg);
CHECK: .entry early_exit(
CHECK: call early_exit_ubt0, (__ubt_arg);
)");
}

TEST(GpuInject, HandProbeMergesExternsAndKeepsTheNewerVersion) {
  UBT_REQUIRE_FIXTURES();
  ProbeProgram program;
  program.ptx = source_ptx("hand_probe.ptx");
  program.attachments = {
      {ProbeSite::Entry, "guarded_exits", "hand_probe"},
      {ProbeSite::Exit, "guarded_exits", "hand_probe_print"}};
  std::string ptx = source_ptx("predicated_exits.ptx");
  auto result = inject_probes(ptx, program);
  ASSERT_TRUE(result) << result.error();
  // 7.0 probe into an 8.0 module: the module keeps 8.0.
  EXPECT_EQ(result->version_major, 8u);
  EXPECT_EQ(result->version_minor, 0u);
  EXPECT_EQ(count(result->ptx, ".version 8.0"), 1u);
  // vprintf is declared by both: a repeated extern declaration is legal
  // and keeps the probe's declaration ahead of its call.
  EXPECT_EQ(count(result->ptx, ".extern .func"), 2u);
  std::map<std::string, std::string> renamed(result->renamed.begin(),
                                             result->renamed.end());
  EXPECT_EQ(renamed["$str"], "$str_ubt0");
  EXPECT_EQ(renamed["ptx_counter"], "ptx_counter_ubt0");
  expect_ptxas_accepts(result->ptx, "hand_probe");
  std::string why;
  if (nvjitlink_available(&why)) {
    LinkResult link = nvjitlink(
        as_bytes(result->ptx.data(), result->ptx.size()), LinkInput::Ptx);
    EXPECT_TRUE(link.ok) << link.log;
  }
}

TEST(GpuInject, ProbesForANewerTargetAreRefused) {
  UBT_REQUIRE_FIXTURES();
  ProbeProgram program;
  program.ptx = source_ptx("hand_probe.ptx");
  size_t at = program.ptx.find(".target sm_70");
  ASSERT_NE(at, std::string::npos);
  program.ptx.replace(at, 13, ".target sm_100");
  program.attachments = {{ProbeSite::Entry, "*", "hand_probe"}};
  auto result = inject_probes(fixture_ptx("vector_add", "default"), program);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find("sm_100"), std::string::npos) << result.error();
}

TEST(GpuInject, AlreadyInstrumentedModulesAreRefused) {
  UBT_REQUIRE_FIXTURES();
  auto once = inject_probes(fixture_ptx("vector_add", "default"), all_probes());
  ASSERT_TRUE(once) << once.error();
  auto twice = inject_probes(once->ptx, all_probes());
  EXPECT_FALSE(twice);
}

} // namespace
} // namespace ubtrace::gpu_test
