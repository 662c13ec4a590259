// GPU probe scripts through the real front end and the NVPTX target: the
// PTX each builtin, map and aggregation turns into, checked by content
// and, when the CUDA toolkit is here, by ptxas.
#include "backends/gpu/gpu_program.h"
#include "runtime/gpu/device_maps_abi.h"
#include "runtime/gpu/map_table.h"
#include "runtime/gpu/ptx_module.h"
#include "tests/unit/jit/script_bundle.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::backends::gpu {
namespace {

Result<GpuProgram> compile(const std::string &script) {
  auto bundle = jit::test::compile_script(script);
  if (!bundle)
    return make_error("front end: " + bundle.error());
  GpuCompileOptions options;
  options.nvptx.host.pid = 4242;
  options.nvptx.host.comm = "vector_add";
  return compile_gpu_program(*bundle, options);
}

std::string ptxas() {
  std::string path = std::string(UBT_CUDA_ROOT) + "/bin/ptxas";
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

// ptxas -arch=sm_90 -c on the probe module alone (its .func compile).
std::string ptxas_errors(const std::string &ptx) {
  char dir[] = "/tmp/ubt_nvptx_XXXXXX";
  if (!mkdtemp(dir))
    return "mkdtemp failed";
  std::string in = std::string(dir) + "/probe.ptx";
  std::ofstream(in) << ptx;
  std::string cmd =
      ptxas() + " -arch=sm_90 -c -o " + dir + "/probe.o " + in + " 2>&1";
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : out;
}

#define EXPECT_PTXAS_ACCEPTS(ptx)                                              \
  do {                                                                         \
    if (!ptxas().empty())                                                      \
      EXPECT_EQ(ptxas_errors(ptx), "") << ptx;                                 \
  } while (0)

bool has(const std::string &ptx, const std::string &what) {
  return ptx.find(what) != std::string::npos;
}

TEST(NvptxCompile, ScalarCountIsAContextFreeWarpAggregatedAtomic) {
  auto program = compile("kernel::vector_add { @threads = count(); }");
  ASSERT_TRUE(program) << program.error();
  const std::string &ptx = program->ptx;
  ASSERT_EQ(program->attachments.size(), 1u);
  const auto &a = program->attachments[0].attachment;
  EXPECT_EQ(a.kernel_pattern, "vector_add");
  EXPECT_EQ(a.site, runtime::gpu::ProbeSite::Entry);
  EXPECT_EQ(a.arg_mask, 0u);
  // No parameter: the injected call builds no context block.
  EXPECT_TRUE(has(ptx, ".visible .func " + a.function + "()")) << ptx;
  // One atomic per warp and address, on this SM's slot of the counter.
  EXPECT_TRUE(has(ptx, "match.any.sync.b64")) << ptx;
  EXPECT_TRUE(has(ptx, "popc.b32")) << ptx;
  EXPECT_TRUE(has(ptx, "atom.add.u64")) << ptx;
  EXPECT_TRUE(has(ptx, "%smid")) << ptx;
  // The maps come from the table the agent fills in.
  EXPECT_TRUE(has(ptx, ".const .align 8 .b8 " UBT_GPU_MAP_TABLE "[")) << ptx;
  // The lifted stack frame is gone: nothing in local memory.
  EXPECT_FALSE(has(ptx, "__local_depot")) << ptx;
  EXPECT_PTXAS_ACCEPTS(ptx);
}

TEST(NvptxCompile, GpuBuiltinsReadSpecialRegisters) {
  auto program = compile(
      "kernel::k { @a[threadIdx.y, blockIdx.z, blockDim.x, gridDim.y] = "
      "count(); @b[warpid, laneid] = count(); } "
      "kernelret::k { @t = hist(nsecs); }");
  ASSERT_TRUE(program) << program.error();
  for (const char *reg : {"%tid.y", "%ctaid.z", "%ntid.x", "%nctaid.y",
                          "%warpid", "%laneid", "%globaltimer"})
    EXPECT_TRUE(has(program->ptx, reg)) << reg;
  ASSERT_EQ(program->attachments.size(), 2u);
  EXPECT_EQ(program->attachments[1].attachment.site,
            runtime::gpu::ProbeSite::Exit);
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

TEST(NvptxCompile, ArgumentsReadPutOnlyThoseInTheMask) {
  auto program = compile(
      "kernel::mixed_params { printf(\"%d %d %lld\\n\", arg0, arg1, arg4); }");
  ASSERT_TRUE(program) << program.error();
  const auto &a = program->attachments[0].attachment;
  EXPECT_EQ(a.arg_mask, (1u << 0) | (1u << 1) | (1u << 4));
  EXPECT_TRUE(
      has(program->ptx, ".visible .func " + a.function + "(\n\t.param .b64"))
      << program->ptx;
  EXPECT_TRUE(program->sends_events);
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

TEST(NvptxCompile, KeyedMapsInsertWithCompareAndSwap) {
  auto program = compile("kernel::k { @b[blockIdx.x] = count(); }");
  ASSERT_TRUE(program) << program.error();
  EXPECT_TRUE(has(program->ptx, "atom.cas.b64")) << program->ptx;
  EXPECT_TRUE(has(program->ptx, "nanosleep")) << program->ptx;
  EXPECT_FALSE(program->sends_events);
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

TEST(NvptxCompile, MinAndMaxAreDeviceAtomicsOfTheirSignedness) {
  auto program =
      compile("kernel::k { @lo = min((uint32)arg0); @hi = max((int64)arg1); }");
  ASSERT_TRUE(program) << program.error();
  EXPECT_TRUE(has(program->ptx, "atom.min.u64")) << program->ptx;
  EXPECT_TRUE(has(program->ptx, "atom.max.s64")) << program->ptx;
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

TEST(NvptxCompile, ProcessBuiltinsAreTheHostProcesssConstants) {
  auto program = compile("kernel::k { printf(\"%d %s\\n\", pid, comm); }");
  ASSERT_TRUE(program) << program.error();
  // pid 4242 and the first bytes of "vector_add", little-endian.
  EXPECT_TRUE(has(program->ptx, "4242")) << program->ptx;
  uint64_t head = 0;
  std::memcpy(&head, "vector_a", 8);
  EXPECT_TRUE(has(program->ptx, std::to_string(head))) << program->ptx;
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

TEST(NvptxCompile, UnsupportedOperationsFailWithTheProbeAndPc) {
  auto program = compile("kernel::k { @x[1] = count(); for ($kv : @x) { "
                         "printf(\"%d\\n\", $kv.0); } }");
  ASSERT_FALSE(program);
  EXPECT_EQ(program.error().rfind("kernel::k: PC ", 0), 0u) << program.error();
  EXPECT_TRUE(has(program.error(),
                  "iterating over a map (for) is not available in GPU probes"))
      << program.error();
}

TEST(NvptxCompile, TheMapTableTakesTheAgentsAddresses) {
  auto program = compile("kernel::k { @c = count(); }");
  ASSERT_TRUE(program) << program.error();
  std::vector<uint64_t> addresses;
  for (uint32_t i = 0; i < program->map_table_entries; ++i)
    addresses.push_back(0x7f0000001000ull * (i + 1));
  auto baked = runtime::gpu::bake_map_table(program->ptx, addresses);
  ASSERT_TRUE(baked) << baked.error();
  std::string want = ".const .align 8 .u64 " UBT_GPU_MAP_TABLE "[" +
                     std::to_string(addresses.size()) + "] = {" +
                     std::to_string(addresses[0]);
  EXPECT_TRUE(has(*baked, want)) << *baked;
  EXPECT_PTXAS_ACCEPTS(*baked);
  addresses.pop_back();
  EXPECT_FALSE(runtime::gpu::bake_map_table(program->ptx, addresses));
}

} // namespace
} // namespace ubtrace::backends::gpu
