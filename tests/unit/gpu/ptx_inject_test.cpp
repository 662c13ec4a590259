#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/ptx_inject.h"
#include "runtime/gpu/ptx_merge.h"

#include <gtest/gtest.h>
#include <map>

namespace ubtrace::runtime::gpu {
namespace {

constexpr std::string_view kModule = R"(.version 8.0
.target sm_90
.address_size 64

.global .align 8 .u64 counter;

.visible .entry first(
	.param .u32 first_n,
	.param .align 8 .b8 first_s[16]
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<2>;
	ld.param.u32 %r1, [first_n];
	setp.eq.u32 %p1, %r1, 0;
	@%p1 ret;
	exit;
}

.visible .entry second()
{
	ret;
}
)";

constexpr std::string_view kProbe = R"(.version 9.0
.target sm_80
.address_size 64

.visible .global .align 8 .u64 counter;
.visible .func probe_ctx(.param .b64 probe_ctx_p)
{
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [probe_ctx_p];
	atom.global.add.u64 %rd2, [counter], 1;
	ret;
}
.func probe_bare()
{
	ret;
}
.func (.param .b32 r) probe_returns()
{
	ret;
}
.func probe_two(.param .b64 a, .param .b64 b)
{
	ret;
}
)";

ProbeProgram program(std::vector<ProbeAttachment> attachments) {
  ProbeProgram p;
  p.ptx = std::string(kProbe);
  p.attachments = std::move(attachments);
  return p;
}

size_t count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

TEST(PtxInject, PlacesCallsAndReportsWhatItDid) {
  auto r =
      inject_probes(kModule, program({{ProbeSite::Entry, "first", "probe_ctx"},
                                      {ProbeSite::Exit, "*", "probe_bare"}}));
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->kernels.size(), 2u);
  EXPECT_EQ(r->kernels[0].name, "first");
  EXPECT_EQ(r->kernels[0].kernel_id, fnv1a64("first"));
  EXPECT_EQ(r->kernels[0].entry_calls, 1u);
  EXPECT_EQ(r->kernels[0].exit_sites, 2u);
  EXPECT_EQ(r->kernels[1].name, "second");
  EXPECT_EQ(r->kernels[1].entry_calls, 0u);
  EXPECT_EQ(r->kernels[1].exit_sites, 1u);
  EXPECT_EQ(count(r->ptx, "call probe_ctx_ubt0, (__ubt_arg);"), 0u);
  // The probe's `counter` clashes with the module's: renamed.
  ASSERT_EQ(r->renamed.size(), 1u);
  EXPECT_EQ(r->renamed[0].first, "counter");
  EXPECT_EQ(r->renamed[0].second, "counter_ubt0");
  EXPECT_EQ(count(r->ptx, "[counter_ubt0]"), 1u);
  EXPECT_EQ(count(r->ptx, "call probe_ctx, (__ubt_arg);"), 1u);
  EXPECT_EQ(count(r->ptx, "@%p1 call probe_bare;\n"), 1u);
  EXPECT_EQ(count(r->ptx, "\tcall probe_bare;\n"), 2u);
  // The struct parameter is passed by address: needs ISA 7.7, already met
  // by the probe's 9.0.
  EXPECT_EQ(count(r->ptx, "cvta.param.u64 %ubt_v, %ubt_v;"), 1u);
  EXPECT_EQ(r->version_major, 9u);
  EXPECT_EQ(count(r->ptx, ".version 9.0\n"), 1u);
  // Only the kernel whose probe takes a context gets a context block.
  EXPECT_EQ(count(r->ptx, ".local .align 8 .b8 __ubt_ctx[32];"), 1u);
  EXPECT_EQ(count(r->ptx, "__ubt_ctx["), 1u);
  // Probe functions are private to the module.
  EXPECT_EQ(count(r->ptx, ".visible .func"), 0u);
  EXPECT_EQ(count(r->ptx, "\n.func probe_ctx("), 1u);
  auto reparsed = parse_ptx(r->ptx);
  ASSERT_TRUE(reparsed) << reparsed.error();
}

TEST(PtxInject, NoMatchLeavesTheTextAlone) {
  auto r = inject_probes(kModule,
                         program({{ProbeSite::Entry, "third*", "probe_ctx"}}));
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->changed());
  EXPECT_EQ(r->ptx, kModule);
  EXPECT_EQ(r->version_major, 8u);
}

TEST(PtxInject, RefusesProbesThatBreakTheConvention) {
  auto returns = inject_probes(
      kModule, program({{ProbeSite::Entry, "*", "probe_returns"}}));
  ASSERT_FALSE(returns);
  EXPECT_EQ(returns.error(),
            "probe .func probe_returns must not return a value");
  auto two =
      inject_probes(kModule, program({{ProbeSite::Entry, "*", "probe_two"}}));
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().find("one 64-bit context pointer"), std::string::npos);
  auto missing = inject_probes(
      kModule, program({{ProbeSite::Entry, "*", "no_such_probe"}}));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "probe PTX defines no .func no_such_probe");
}

TEST(PtxMerge, RefusesAnotherAddressSizeAndANewerTarget) {
  auto module = parse_ptx(kModule);
  ASSERT_TRUE(module);
  std::string probe32(kProbe);
  probe32.replace(probe32.find(".address_size 64"), 16, ".address_size 32");
  auto p32 = parse_ptx(probe32);
  ASSERT_TRUE(p32);
  EXPECT_FALSE(plan_probe_merge(*module, *p32));
  std::string newer(kProbe);
  newer.replace(newer.find("sm_80"), 5, "sm_100");
  auto pn = parse_ptx(newer);
  ASSERT_TRUE(pn);
  auto merge = plan_probe_merge(*module, *pn);
  ASSERT_FALSE(merge);
  EXPECT_EQ(merge.error(),
            "probe PTX targets sm_100, newer than the module's sm_90");
}

TEST(PtxMerge, RenamesEveryUseAndPicksUnusedNames) {
  std::string module_text(kModule);
  // The obvious new name is taken too.
  module_text += ".global .u32 counter_ubt0;\n";
  auto module = parse_ptx(module_text);
  ASSERT_TRUE(module) << module.error();
  auto probe = parse_ptx(kProbe);
  ASSERT_TRUE(probe);
  auto merge = plan_probe_merge(*module, *probe);
  ASSERT_TRUE(merge) << merge.error();
  EXPECT_EQ(merge->name_in_module("counter"), "counter_ubt1");
  EXPECT_EQ(merge->name_in_module("probe_ctx"), "probe_ctx");
  EXPECT_EQ(count(merge->text, "counter_ubt1"), 2u); // definition and use
  EXPECT_EQ(count(merge->text, " counter;"), 0u);
}

TEST(PtxMerge, ExternsTheModuleDefinesAreDropped) {
  std::string probe = std::string(kProbe) + ".extern .global .u64 counter2;\n"
                                            ".extern .func second2();\n";
  std::string module_text =
      std::string(kModule) + ".visible .global .u64 counter2;\n";
  auto m = parse_ptx(module_text);
  auto p = parse_ptx(probe);
  ASSERT_TRUE(m && p);
  auto merge = plan_probe_merge(*m, *p);
  ASSERT_TRUE(merge) << merge.error();
  EXPECT_EQ(count(merge->text, "counter2"), 0u);
  EXPECT_EQ(count(merge->text, ".extern .func second2();"), 1u);
}

} // namespace
} // namespace ubtrace::runtime::gpu
