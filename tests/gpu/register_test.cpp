// The agent's first interception point, rehearsed without a GPU: this test
// defines the CUDA runtime's registration entry points itself, as the
// agent's LD_PRELOAD library will, then dlopens an nvcc-built shared
// library (shared cudart). Its constructor registers its fatbin wrapper and
// kernels with us; the rewriter must instrument exactly the kernels the
// runtime registered, from the wrapper as it lies in the library's memory.
#include "gpu_test_support.h"
#include "runtime/gpu/fatbin.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/image.h"
#include "runtime/gpu/module_rewriter.h"

#include <dlfcn.h>
#include <filesystem>
#include <set>

namespace {

struct Registered {
  std::vector<const void *> wrappers;
  std::set<std::string> kernels;
  std::vector<const void *> host_stubs;
  int fatbin_ends = 0;
};

Registered &registered() {
  static Registered r;
  return r;
}

void *handles[16];

} // namespace

// The registration ABI of the CUDA runtime (crt/host_runtime.h), seen
// from the library's constructor: versioned references to libcudart bind
// to these unversioned definitions of the executable first.
extern "C" {
void **__cudaRegisterFatBinary(void *wrapper) {
  registered().wrappers.push_back(wrapper);
  return &handles[registered().wrappers.size() % 16];
}
void __cudaRegisterFatBinaryEnd(void **) {
  ++registered().fatbin_ends;
}
void __cudaUnregisterFatBinary(void **) {}
void __cudaRegisterFunction(void **, const char *host_fun, char *,
                            const char *device_name, int, void *, void *,
                            void *, void *, int *) {
  registered().kernels.insert(device_name);
  registered().host_stubs.push_back(host_fun);
}
}

namespace ubtrace::gpu_test {
namespace {

using namespace runtime::gpu;

TEST(GpuRegistration, InterposedRegistrationHandsTheRewriterTheLibrarysFatbin) {
  UBT_REQUIRE_FIXTURES();
  std::string path = fixtures_dir() + "/libkernel_lib.so";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  const Registered &r = registered();
  ASSERT_EQ(r.wrappers.size(), 1u);
  EXPECT_EQ(r.fatbin_ends, 1);
  EXPECT_EQ(r.kernels.size(), 3u);

  // The wrapper and its fatbin lie in the library's mapping.
  Dl_info where{};
  ASSERT_NE(dladdr(r.wrappers[0], &where), 0);
  EXPECT_EQ(std::filesystem::canonical(where.dli_fname),
            std::filesystem::canonical(path));
  auto view = view_image(r.wrappers[0]);
  ASSERT_TRUE(view) << view.error();
  ASSERT_EQ(view->kind, ImageKind::FatbinWrapper);
  Dl_info data_where{};
  ASSERT_NE(dladdr(view->bytes.data(), &data_where), 0);
  EXPECT_EQ(data_where.dli_fbase, where.dli_fbase);

  ProbeProgram program;
  program.ptx = read_text(fixtures_dir() + "/probes.ptx");
  program.attachments = {{ProbeSite::Entry, "*", "__ubt_probe_count"},
                         {ProbeSite::Exit, "*", "__ubt_probe_timestamp"}};
  auto rewriter = ModuleRewriter::create(std::move(program), {90});
  ASSERT_TRUE(rewriter) << rewriter.error();
  auto out = (*rewriter)->rewrite(r.wrappers[0]);
  ASSERT_TRUE(out) << out.error();
  const RewrittenImage &img = **out;
  ASSERT_EQ(img.outcome, RewriteOutcome::Instrumented) << img.note;
  std::set<std::string> instrumented;
  for (const InstrumentedKernel &k : img.kernels)
    instrumented.insert(k.name);
  EXPECT_EQ(instrumented, r.kernels);

  // What the agent would hand the real __cudaRegisterFatBinary.
  auto handed = view_image(img.driver_image());
  ASSERT_TRUE(handed) << handed.error();
  EXPECT_EQ(handed->kind, ImageKind::FatbinWrapper);
  auto fatbin = parse_fatbin(handed->bytes);
  ASSERT_TRUE(fatbin) << fatbin.error();
  ASSERT_EQ(fatbin->entries.size(), 1u);
  auto ptx = entry_ptx(fatbin->entries[0]);
  ASSERT_TRUE(ptx) << ptx.error();
  if (!cuda_tool("ptxas").empty()) {
    CommandResult assembled = run_ptxas(*ptx);
    EXPECT_EQ(assembled.status, 0) << assembled.output;
  }
  dlclose(lib);
}

} // namespace
} // namespace ubtrace::gpu_test
