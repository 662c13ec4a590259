// GPU probe scripts through the real front end and the NVPTX target: the
// PTX each builtin, map and aggregation turns into, checked by content
// and, when the CUDA toolkit is here, by ptxas.
#include "backends/gpu/gpu_program.h"
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/device_maps_abi.h"
#include "runtime/gpu/gpu_helper_ids.h"
#include "runtime/gpu/map_table.h"
#include "runtime/gpu/ptx_module.h"
#include "runtime/jit/nvptx_target.h"
#include "tests/unit/jit/script_bundle.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>
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

// A probe that uses no map has no table to fill: its module is used as it
// is (the agent once disabled GPU probes for it).
TEST(NvptxCompile, AProbeWithoutMapsNeedsNoTable) {
  auto program = compile("kernel::k { $x = threadIdx.x; }");
  ASSERT_TRUE(program) << program.error();
  EXPECT_FALSE(has(program->ptx, UBT_GPU_MAP_TABLE)) << program->ptx;
  std::vector<uint64_t> addresses(program->map_table_entries, 0x7f0000001000ull);
  auto baked = runtime::gpu::bake_map_table(program->ptx, addresses);
  ASSERT_TRUE(baked) << baked.error();
  EXPECT_EQ(*baked, program->ptx);
  EXPECT_PTXAS_ACCEPTS(*baked);
}

// ---- reads through pointers -------------------------------------------

// Every `call` in the PTX names a function the module defines: nothing is
// left for the driver's link step to find (the device runtime is inlined
// or linked in).
std::vector<std::string> unresolved_calls(const std::string &ptx) {
  auto module = runtime::gpu::parse_ptx(ptx);
  if (!module)
    return {"unparsable PTX: " + module.error()};
  std::set<std::string> defined;
  for (const auto &fn : module->functions)
    if (fn.has_body)
      defined.insert(std::string(fn.name));
  std::vector<std::string> out;
  static const std::regex call(
      R"(\bcall(\.uni)?\s+(\([^)]*\),\s*)?([A-Za-z_$][\w$]*))");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), call), end; it != end;
       ++it)
    if (!defined.count((*it)[3].str()))
      out.push_back((*it)[3].str());
  return out;
}

// The body of `.func NAME` in the PTX.
std::string function_body(const std::string &ptx, const std::string &name) {
  auto module = runtime::gpu::parse_ptx(ptx);
  if (!module)
    return "";
  for (const auto &fn : module->functions)
    if (fn.name == name && fn.has_body)
      return ptx.substr(fn.body_open, fn.body_close - fn.body_open);
  return "";
}

size_t count_of(const std::string &text, const std::regex &re) {
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                       std::sregex_iterator());
}

// A branch to a label defined above it: a loop.
bool has_loop(const std::string &body) {
  std::set<std::string> seen;
  std::istringstream in(body);
  static const std::regex label(R"(^(\$[\w$]+):)");
  static const std::regex branch(R"(\bbra(\.uni)?\s+(\$[\w$]+);)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, label))
      seen.insert(m[1].str());
    else if (std::regex_search(line, m, branch) && seen.count(m[2].str()))
      return true;
  }
  return false;
}

// The null-page test: an unsigned 64-bit compare with the page's end.
const std::regex
    kNullPageTest(R"(setp\.(gt|ge|lt|le)\.u64\s+%p\d+, %rd\d+, 6553[56];)");
const std::regex kGenericLoad32(R"(\bld\.u32\s+%r\d+, \[%rd\d+\];)");
const std::regex kGenericLoad8(R"(\bld\.u8\s)");

TEST(NvptxCompile, AScalarReadThroughAPointerIsOneBoundedLoad) {
  auto program = compile("kernel::mixed_params { @x = max(*(int32 *)arg2); }");
  ASSERT_TRUE(program) << program.error();
  const std::string &ptx = program->ptx;
  EXPECT_EQ(program->attachments[0].attachment.arg_mask, 1u << 2);
  EXPECT_EQ(unresolved_calls(ptx), std::vector<std::string>{}) << ptx;
  std::string body =
      function_body(ptx, program->attachments[0].attachment.function);
  ASSERT_FALSE(body.empty()) << ptx;
  // Null and the first 64 KiB read as a fault, then one 32-bit generic
  // load (aligned: the common case), with four byte loads, unrolled, for a
  // misaligned pointer; no loop.
  EXPECT_EQ(count_of(body, kNullPageTest), 1u) << body;
  EXPECT_EQ(count_of(body, kGenericLoad32), 1u) << body;
  EXPECT_LE(count_of(body, kGenericLoad8), 4u) << body;
  EXPECT_FALSE(has_loop(body)) << body;
  EXPECT_PTXAS_ACCEPTS(ptx);
}

TEST(NvptxCompile, FieldsElementsAndStringsReadThroughPointers) {
  auto program =
      compile("struct Pair { int first; float second; short third; } "
              "kernel::mixed_params { @a = sum(*(int32 *)arg2); "
              "@b = max(((struct Pair *)arg3)->third); "
              "@c[((int64 *)arg2)[3]] = count(); @s[str(arg2)] = count(); "
              "@n[str(arg2, 5)] = count(); @buf[buf(arg2, 6)] = count(); "
              "@var[buf(arg2, arg0)] = count(); }");
  ASSERT_TRUE(program) << program.error();
  const std::string &ptx = program->ptx;
  EXPECT_EQ(program->attachments[0].attachment.arg_mask,
            (1u << 0) | (1u << 2) | (1u << 3));
  EXPECT_EQ(unresolved_calls(ptx), std::vector<std::string>{}) << ptx;
  // The struct field: a 16-bit generic load; the element: a 64-bit one.
  EXPECT_TRUE(
      std::regex_search(ptx, std::regex(R"(\bld\.u16\s+%rs\d+, \[%rd\d+\];)")))
      << ptx;
  EXPECT_TRUE(
      std::regex_search(ptx, std::regex(R"(\bld\.u64\s+%rd\d+, \[%rd\d+\];)")))
      << ptx;
  // Every read is behind the null-page test (seven reads, some merged by
  // the optimiser where they test the same pointer and size).
  EXPECT_GE(count_of(ptx, kNullPageTest), 3u) << ptx;
  EXPECT_PTXAS_ACCEPTS(ptx);
}

TEST(NvptxCompile, TheVerifierForGpuProbesTakesEveryReadHelper) {
  // probe_read*, probe_read*_str: what codegen emits for *p, p->f, p[i],
  // str() and buf(), and what bpf programs written by hand call.
  for (const char *name :
       {"probe_read", "probe_read_user", "probe_read_kernel", "probe_read_str",
        "probe_read_user_str", "probe_read_kernel_str"}) {
    bool found = false;
    for (int32_t id = 0; id < 256 && !found; ++id)
      if (const vm::HelperProto *p = jit::gpu_helper_protos().find(id))
        found = p->name == name;
    EXPECT_TRUE(found) << name;
  }
}

// ---- func and probe -----------------------------------------------------

TEST(NvptxCompile, FuncIsTheKernelIdWithTheGpuPid) {
  auto program = compile("kernel::k { @[func] = count(); }");
  ASSERT_TRUE(program) << program.error();
  EXPECT_TRUE(program->reads_kernel_id);
  const auto &a = program->attachments[0].attachment;
  // The context's kernel id and nothing else of it.
  EXPECT_EQ(a.arg_mask, 0u);
  EXPECT_TRUE(has(program->ptx, ".visible .func " + a.function + "(\n\t.param"))
      << program->ptx;
  EXPECT_TRUE(has(program->ptx, std::to_string(runtime::gpu::kGpuFuncPid)))
      << program->ptx;
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

TEST(NvptxCompile, ProbeFoldsToAConstantWhereTheBlockHasOneAttachPoint) {
  auto program = compile("kernel::k { @[probe] = count(); }");
  ASSERT_TRUE(program) << program.error();
  // Nothing of the context is read: the probe takes no parameter.
  const auto &a = program->attachments[0].attachment;
  EXPECT_TRUE(has(program->ptx, ".visible .func " + a.function + "()"))
      << program->ptx;
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

TEST(NvptxCompile, ProbeIsPickedBySiteAndKernelPerBlock) {
  auto bundle = jit::test::compile_script(
      "kernel:/bin/app:*,kernelret:/bin/app:* { @[probe] = count(); } "
      "kernel:/bin/app:fill_c { @one[probe] = count(); }");
  ASSERT_TRUE(bundle) << bundle.error();
  KnownKernels kernels;
  kernels.add("/bin/app", "fill_c");
  kernels.add("/bin/app", "_ZN11ubt_samples7collatzEPii");
  kernels.add("/bin/other", "elsewhere");
  GpuCompileOptions options;
  options.kernels = [&] { return &kernels; };
  options.first_new_probe_id = bundle->probes.size();
  auto program = compile_gpu_program(*bundle, options);
  ASSERT_TRUE(program) << program.error();
  EXPECT_EQ(program->probe_names,
            (std::vector<std::string>{
                "kernel:/bin/app:fill_c",
                "kernel:/bin/app:_ZN11ubt_samples7collatzEPii",
                "kernelret:/bin/app:fill_c",
                "kernelret:/bin/app:_ZN11ubt_samples7collatzEPii"}));
  ASSERT_EQ(program->attachments.size(), 3u);
  // The two-site block compares the kernel id with its kernels' and
  // reads the site; the other folds to its own id.
  std::string both =
      function_body(program->ptx, program->attachments[0].attachment.function);
  std::string one =
      function_body(program->ptx, program->attachments[2].attachment.function);
  ASSERT_FALSE(both.empty());
  ASSERT_FALSE(one.empty());
  for (const char *k : {"fill_c", "_ZN11ubt_samples7collatzEPii"}) {
    std::string id =
        std::to_string(static_cast<int64_t>(runtime::gpu::fnv1a64(k)));
    EXPECT_TRUE(has(both, id)) << k << "\n" << both;
    EXPECT_FALSE(has(one, id)) << k << "\n" << one;
  }
  EXPECT_FALSE(has(both, std::to_string(static_cast<int64_t>(
                             runtime::gpu::fnv1a64("elsewhere")))));
  EXPECT_TRUE(has(both, "+12]")) << both; // the context's site
  EXPECT_TRUE(
      has(program->ptx, ".visible .func " +
                            program->attachments[2].attachment.function + "()"))
      << program->ptx;
  EXPECT_PTXAS_ACCEPTS(program->ptx);
}

} // namespace
} // namespace ubtrace::backends::gpu
