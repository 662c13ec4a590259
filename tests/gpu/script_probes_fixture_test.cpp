// Real GPU scripts end to end, offline: ubtrace's front end and codegen,
// the NVPTX target (runtime/jit/nvptx_target.h), the map table baked with
// device addresses as the agent does, and the agent's ModuleRewriter on
// every nvcc-built sample app. ptxas -arch=sm_90 and nvJitLink must accept
// every rewritten module; FileCheck checks the call sites.
#include "backends/gpu/gpu_program.h"
#include "gpu_test_support.h"
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/map_table.h"
#include "runtime/gpu/module_rewriter.h"
#include "tests/unit/jit/script_bundle.h"

#include <map>
#include <set>

namespace ubtrace::gpu_test {
namespace {

using namespace runtime::gpu;

// The scripts tests/gpu/device-check.sh runs on a GPU, and more shapes.
const char *const kScripts[] = {
    "kernel::vector_add { @threads = count(); } "
    "kernelret::vector_add { @ns = hist(nsecs); }",
    "kernel::vector_add { @start[blockIdx.x] = nsecs; } "
    "kernelret::vector_add { @block_ns = hist(nsecs - @start[blockIdx.x]); }",
    "kernel::* { @by_sm[smid] = count(); @blocks[blockIdx.x, blockIdx.y] = "
    "count(); @lanes = lhist(laneid, 0, 32, 8); }",
    "kernel::mixed_params { @count = max(arg0); @scale = sum(arg1); "
    "@off = min(arg4); printf(\"count=%d offset=%lld pid=%d %s\\n\", arg0, "
    "arg4, pid, comm); }",
    "kernel:*:*scale_kernel* { @s[threadIdx.x % 4] = lhist(threadIdx.x, 0, "
    "256, 32); } kernelret::*collatz { @c = stats(nsecs); @a = avg(warpid); }",
    "kernel::matmul_tiled /threadIdx.x == 0 && threadIdx.y == 0/ { "
    "@tiles[blockIdx.x, blockIdx.y] = count(); } "
    "kernelret::matmul_tiled /threadIdx.x == 0/ { @done = count(); }",
};

struct Compiled {
  backends::gpu::GpuProgram program;
  std::unique_ptr<ModuleRewriter> rewriter;
};

// What the agent does for one CUDA context: addresses into the table,
// then a rewriter for the device's SM (90: the fixtures' and an H100's).
Result<Compiled> compile_for_device(const std::string &script) {
  auto bundle = jit::test::compile_script(script);
  if (!bundle)
    return make_error(bundle.error());
  backends::gpu::GpuCompileOptions options;
  options.nvptx.host.pid = 1234;
  options.nvptx.host.comm = "param_types";
  auto program = backends::gpu::compile_gpu_program(*bundle, options);
  if (!program)
    return make_error(program.error());
  std::vector<uint64_t> addresses;
  for (uint32_t i = 0; i < program->map_table_entries; ++i)
    addresses.push_back(0x7f0000000000ull + (uint64_t(i) << 24));
  auto baked = bake_map_table(program->ptx, addresses);
  if (!baked)
    return make_error(baked.error());
  ProbeProgram probes = backends::gpu::probe_program(*program);
  probes.ptx = *baked;
  auto rewriter = ModuleRewriter::create(std::move(probes), {90});
  if (!rewriter)
    return make_error(rewriter.error());
  return Compiled{std::move(*program), std::move(*rewriter)};
}

std::vector<std::vector<uint8_t>> fixture_fatbins(const Fixture &f) {
  std::vector<uint8_t> file = read_file(f.path);
  auto found = find_elf_fatbins(file);
  EXPECT_TRUE(found) << found.error();
  std::vector<std::vector<uint8_t>> out;
  if (found)
    for (const ElfFatbin &fb : found->fatbins)
      out.emplace_back(fb.fatbin.bytes.begin(), fb.fatbin.bytes.end());
  return out;
}

std::string rewritten_ptx(const RewrittenImage &img) {
  auto parsed = parse_fatbin(img.image);
  EXPECT_TRUE(parsed) << parsed.error();
  if (!parsed || parsed->entries.size() != 1)
    return "";
  auto ptx = entry_ptx(parsed->entries[0]);
  EXPECT_TRUE(ptx) << ptx.error();
  return ptx ? *ptx : "";
}

TEST(GpuScriptProbes,
     EveryScriptCompilesForEveryFixtureAndPtxasAndNvJitLinkAccept) {
  UBT_REQUIRE_FIXTURES();
  if (cuda_tool("ptxas").empty())
    GTEST_SKIP() << "ptxas not found";
  std::string why;
  bool have_nvjitlink = nvjitlink_available(&why);
  std::set<ContentHash> checked;
  size_t instrumented_kernels = 0;
  for (const char *script : kScripts) {
    SCOPED_TRACE(script);
    auto compiled = compile_for_device(script);
    ASSERT_TRUE(compiled) << compiled.error();
    for (const Fixture &f : fixtures()) {
      SCOPED_TRACE(f.name());
      for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
        auto out = compiled->rewriter->rewrite(
            static_cast<const void *>(fatbin.data()));
        ASSERT_TRUE(out) << out.error();
        const RewrittenImage &img = **out;
        if (img.outcome == RewriteOutcome::NoPtx ||
            img.outcome == RewriteOutcome::NoMatch)
          continue;
        ASSERT_EQ(img.outcome, RewriteOutcome::Instrumented) << img.note;
        instrumented_kernels += img.kernels.size();
        std::string ptx = rewritten_ptx(img);
        if (!checked.insert(hash_content(as_bytes(ptx.data(), ptx.size())))
                 .second)
          continue; // the same module from another build variant
        CommandResult r = run_ptxas(ptx);
        EXPECT_EQ(r.status, 0) << "ptxas rejected:\n" << r.output;
        if (have_nvjitlink) {
          LinkResult link = nvjitlink(img.image, LinkInput::Fatbin);
          EXPECT_TRUE(link.ok) << link.log;
        }
      }
    }
  }
  // Script 1-2: vector_add (8 builds each); 3: every kernel of every app
  // (8 builds x (1+1+1+5) + 2 debug builds x 5); 4: param_types; 5: the
  // two scale_kernel instances and collatz of multi_kernel (10 builds);
  // 6: matmul.
  EXPECT_EQ(instrumented_kernels,
            8u + 8u + (8u * 8 + 2u * 5) + 8u + 10u * 3 + 8u);
  if (!have_nvjitlink)
    GTEST_SKIP() << "ptxas checked everything; nvJitLink absent: " << why;
}

TEST(GpuScriptProbes, VectorAddCallSitesAndMapTable) {
  UBT_REQUIRE_FIXTURES();
  if (filecheck_path().empty())
    GTEST_SKIP() << "FileCheck not found (" << UBT_FILECHECK << ")";
  auto compiled = compile_for_device(kScripts[0]);
  ASSERT_TRUE(compiled) << compiled.error();
  // count() reads no argument: a context-free probe; so does the hist.
  ASSERT_EQ(compiled->program.attachments.size(), 2u);
  for (const auto &a : compiled->program.attachments)
    EXPECT_EQ(a.attachment.arg_mask, 0u) << a.attachment.function;
  std::string ptx;
  for (const Fixture &f : fixtures())
    if (f.app == "vector_add" && f.variant == "default" &&
        f.runtime == "static")
      for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
        auto out = compiled->rewriter->rewrite(
            static_cast<const void *>(fatbin.data()));
        ASSERT_TRUE(out) << out.error();
        if ((*out)->outcome == RewriteOutcome::Instrumented)
          ptx = rewritten_ptx(**out);
      }
  ASSERT_FALSE(ptx.empty());
  CommandResult r = filecheck(ptx, R"(
CHECK: .const .align 8 .u64 __ubt_gpu_maps[5] = {139637976727552, 139637993504768, {{.*}}};
CHECK: .func __ubt_probe_p0()
CHECK: match.any.sync.b64
CHECK: atom.add.u64
CHECK: .func __ubt_probe_p1()
CHECK: %globaltimer
CHECK: .entry _Z10vector_addPKfS0_Pfi(
CHECK-NOT: ret;
CHECK: call __ubt_probe_p0;
CHECK-NOT: ret;
CHECK: call __ubt_probe_p1;
CHECK-NEXT: }
CHECK-NEXT: ret;
)");
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(GpuScriptProbes, ArgumentsReachTheContextOnlyWhereRead) {
  UBT_REQUIRE_FIXTURES();
  auto compiled = compile_for_device(kScripts[3]);
  ASSERT_TRUE(compiled) << compiled.error();
  ASSERT_EQ(compiled->program.attachments.size(), 1u);
  // arg0, arg1 and arg4: int count, float scale, long long offset.
  EXPECT_EQ(compiled->program.attachments[0].attachment.arg_mask, 0x13u);
}

TEST(GpuScriptProbes, WhatTheGpuCannotDoFailsNamingTheProbe) {
  auto bundle = jit::test::compile_script(
      "kernel::vector_add { @x[1] = count(); for ($kv : @x) { "
      "printf(\"%d\\n\", $kv.0); } }");
  ASSERT_TRUE(bundle) << bundle.error();
  auto program = backends::gpu::compile_gpu_program(*bundle);
  ASSERT_FALSE(program);
  EXPECT_NE(program.error().find("kernel::vector_add"), std::string::npos)
      << program.error();
  EXPECT_NE(program.error().find("iterating over a map (for) is not "
                                 "available in GPU probes"),
            std::string::npos)
      << program.error();
}

} // namespace
} // namespace ubtrace::gpu_test
