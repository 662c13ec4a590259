// The agent's CUDA interception with real nvcc-built applications, their
// real CUDA runtime (static and shared) and ubtrace itself; only the
// driver is a stand-in (tests/gpu/standin/libcuda_standin.c, loaded as
// libcuda.so.1 through LD_LIBRARY_PATH): it records every image it is
// asked to load and every launch, and keeps "device" memory in host memory.
// No kernel runs, so these tests prove that module loads reach the
// rewriter, that the driver receives the rewritten image (checked again by
// ptxas and nvJitLink), that device maps are allocated where the baked
// table says, and that what the device maps hold (here written by the
// stand-in, as a GPU running the probes would) is read back and printed.
#include "gpu_test_support.h"
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/fatbin.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/image.h"
#include "runtime/gpu/ptx_module.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace ubtrace::gpu_test {
namespace {

namespace fs = std::filesystem;
using namespace runtime::gpu;

std::string build_dir() {
  const char *dir = std::getenv("UBTRACE_BUILD_DIR");
  return dir ? dir : UBT_BUILD_DIR;
}

std::string fixture(const std::string &app, const std::string &variant,
                    const std::string &runtime) {
  for (const Fixture &f : fixtures())
    if (f.app == app && f.variant == variant && f.runtime == runtime)
      return f.path;
  return "";
}

struct Trace {
  CommandResult result;
  std::string dir; // the stand-in's records
  std::vector<std::string> calls;

  std::vector<std::string> lines_starting(const std::string &word) const {
    std::vector<std::string> out;
    for (const std::string &c : calls)
      if (c.rfind(word + " ", 0) == 0)
        out.push_back(c);
    return out;
  }
};

// ubtrace OPTIONS -e SCRIPT -c APP, with the stand-in driver in front.
Trace trace_with_options(const std::string &options, const std::string &script,
                         const std::string &app,
                         const std::string &extra_env = "") {
  Trace t;
  t.dir = make_temp_dir();
  std::string env = "env UBT_STANDIN_DIR=" + t.dir +
                    " LD_LIBRARY_PATH=" + UBT_STANDIN_DIR + ":" +
                    UBT_CUDA_ROOT + "/lib64 " + extra_env;
  t.result = run_command(env + " timeout 60 " + build_dir() + "/ubtrace " +
                         options + " -e '" + script + "' -c '" + app + "'");
  std::istringstream calls(read_text(t.dir + "/calls.log"));
  for (std::string line; std::getline(calls, line);)
    t.calls.push_back(line);
  return t;
}

Trace trace(const std::string &script, const std::string &app,
            const std::string &extra_env = "") {
  return trace_with_options("", script, app, extra_env);
}

std::string image_ptx(const std::vector<uint8_t> &image) {
  auto view = view_image(image);
  EXPECT_TRUE(view) << view.error();
  if (!view || view->kind != ImageKind::Fatbin)
    return "";
  auto fatbin = parse_fatbin(view->bytes);
  EXPECT_TRUE(fatbin) << fatbin.error();
  if (!fatbin)
    return "";
  // The rewritten fatbin holds the instrumented PTX and nothing else: the
  // driver must JIT it (no SASS to take instead).
  EXPECT_EQ(fatbin->entries.size(), 1u);
  if (fatbin->entries.size() != 1 || fatbin->entries[0].kind != EntryKind::Ptx)
    return "";
  auto ptx = entry_ptx(fatbin->entries[0]);
  EXPECT_TRUE(ptx) << ptx.error();
  return ptx ? *ptx : "";
}

#define REQUIRE_STANDIN_RUN()                                                  \
  do {                                                                         \
    UBT_REQUIRE_FIXTURES();                                                    \
    if (!fs::exists(build_dir() + "/ubtrace") ||                               \
        !fs::exists(build_dir() + "/libubtrace_preload.so"))                   \
      GTEST_SKIP() << "ubtrace and its agent are not built in "                \
                   << build_dir();                                             \
  } while (0)

TEST(GpuAgentStandin, EveryAppsModuleIsRewrittenBeforeTheDriverGetsIt) {
  REQUIRE_STANDIN_RUN();
  std::string why;
  bool have_nvjitlink = nvjitlink_available(&why);
  const std::map<std::string, std::set<std::string>> kernels = {
      {"vector_add", {"_Z10vector_addPKfS0_Pfi"}},
      {"matmul", {"_Z12matmul_tiledPKfS0_Pfi"}},
      {"param_types", {"_Z12mixed_paramsifPf4Pairx"}},
      {"multi_kernel",
       {"fill_c", "early_exit", "_ZN11ubt_samples12scale_kernelIfEEvPT_S1_i",
        "_ZN11ubt_samples12scale_kernelIdEEvPT_S1_i",
        "_ZN11ubt_samples7collatzEPii"}},
  };
  for (const auto &[app, names] : kernels)
    for (const char *rt : {"static", "shared"})
      for (const char *variant : {"default", "compressall"}) {
        SCOPED_TRACE(app + "_" + variant + "_" + rt);
        std::string exe = fixture(app, variant, rt);
        ASSERT_FALSE(exe.empty());
        Trace t = trace("kernel::* { @calls = count(); } "
                        "kernelret::* { @ns = hist(nsecs); }",
                        exe);
        EXPECT_NE(t.result.output.find("Attached 2 probes"), std::string::npos)
            << t.result.output;
        // One module, loaded through the public library API, rewritten.
        auto loads = t.lines_starting("load");
        ASSERT_EQ(loads.size(), 1u) << t.result.output;
        EXPECT_EQ(loads[0].rfind("load cuLibraryLoadData image-0 ", 0), 0u)
            << loads[0];
        std::vector<uint8_t> image = read_file(t.dir + "/image-0.bin");
        std::string ptx = image_ptx(image);
        ASSERT_FALSE(ptx.empty());
        auto module = parse_ptx(ptx);
        ASSERT_TRUE(module) << module.error();
        for (const std::string &name : names) {
          const PtxFunction *fn = module->find_function(name);
          ASSERT_NE(fn, nullptr) << name;
          std::string_view body = ptx;
          body = body.substr(fn->begin, fn->end - fn->begin);
          EXPECT_NE(body.find("call __ubt_probe_p0;"), std::string::npos)
              << name;
          EXPECT_NE(body.find("call __ubt_probe_p1;"), std::string::npos)
              << name;
        }
        // The map table holds the addresses the driver handed out.
        std::set<std::string> allocated;
        for (const std::string &a : t.lines_starting("alloc"))
          allocated.insert(a.substr(a.rfind(' ') + 1));
        size_t table = ptx.find("__ubt_gpu_maps[");
        ASSERT_NE(table, std::string::npos);
        std::string values =
            ptx.substr(ptx.find('{', table) + 1,
                       ptx.find('}', table) - ptx.find('{', table) - 1);
        size_t baked = 0;
        std::istringstream in(values);
        for (std::string v; std::getline(in, v, ',');) {
          v.erase(0, v.find_first_not_of(' '));
          if (v != "0") {
            EXPECT_TRUE(allocated.count(v)) << v << " was never allocated";
            ++baked;
          }
        }
        EXPECT_GE(baked, 3u); // @calls, @ns, the events ring, the globals
        // Every kernel the application launched, by its name.
        std::set<std::string> launched;
        for (const std::string &l : t.lines_starting("launch"))
          launched.insert(l.substr(7, l.find(' ', 7) - 7));
        EXPECT_EQ(launched, names);
        CommandResult as = run_ptxas(ptx);
        EXPECT_EQ(as.status, 0) << as.output;
        if (have_nvjitlink) {
          LinkResult link = nvjitlink(image, LinkInput::Fatbin);
          EXPECT_TRUE(link.ok) << link.log;
        }
        fs::remove_all(t.dir);
      }
}

// What device maps hold is read back (at exit: the agent's atexit or the
// runtime's primary-context release) and printed like a CPU map. The
// stand-in adds gridDim*blockDim per launch to @threads' slot 0, as the
// count() probe would on a GPU.
TEST(GpuAgentStandin, DeviceMapsAreReadBackAtExitAndPrinted) {
  REQUIRE_STANDIN_RUN();
  for (const char *rt : {"static", "shared"}) {
    SCOPED_TRACE(rt);
    // 1000 elements in blocks of 256: 4 blocks; 3 launches.
    Trace t = trace("kernel::vector_add { @threads = count(); }",
                    fixture("vector_add", "default", rt) + " 1000 3",
                    "UBT_STANDIN_COUNT=0:64");
    EXPECT_EQ(t.result.status, 0) << t.result.output;
    EXPECT_EQ(t.lines_starting("launch").size(), 3u);
    EXPECT_NE(t.result.output.find("@threads: 3072\n"), std::string::npos)
        << t.result.output;
    fs::remove_all(t.dir);
  }
}

// One map updated by a uprobe and a GPU probe prints merged: the device's
// totals are one more slot of the map.
TEST(GpuAgentStandin, AMapUpdatedOnCpuAndGpuPrintsMerged) {
  REQUIRE_STANDIN_RUN();
  std::string exe = fixture("vector_add", "default", "static");
  Trace t = trace("uprobe:" + exe +
                      ":main { @c = count(); @main = count(); } "
                      "kernel::vector_add { @c = count(); }",
                  exe + " 1000 2", "UBT_STANDIN_COUNT=0:64");
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  // 2 launches x 1024 threads on the GPU, main once on the CPU.
  EXPECT_NE(t.result.output.find("@c: 2049\n"), std::string::npos)
      << t.result.output;
  EXPECT_NE(t.result.output.find("@main: 1\n"), std::string::npos)
      << t.result.output;
  fs::remove_all(t.dir);
}

// printf() on the GPU writes the device events ring; the agent drains it
// into the region's ring and the CLI prints it like a CPU probe's event.
// The stand-in writes the record the probe would (abi::EventType::Printf,
// format 0, the argument 42) at each launch.
TEST(GpuAgentStandin, DeviceEventsAreDrainedAndPrinted) {
  REQUIRE_STANDIN_RUN();
  auto le64 = [](uint64_t v) {
    std::string hex;
    char buf[3];
    for (int i = 0; i < 8; ++i) {
      std::snprintf(buf, sizeof buf, "%02x", unsigned((v >> (8 * i)) & 0xff));
      hex += buf;
    }
    return hex;
  };
  std::string record = le64(1) + le64(0) + le64(42);
  // No map of the script: the events ring is the bundle's map 0.
  Trace t = trace("kernel::vector_add { printf(\"hello %d\\n\", 42); }",
                  fixture("vector_add", "default", "static") + " 1000 2",
                  "UBT_STANDIN_EVENT=0:" + record);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  size_t first = t.result.output.find("hello 42\n");
  ASSERT_NE(first, std::string::npos) << t.result.output;
  EXPECT_NE(t.result.output.find("hello 42\n", first + 1), std::string::npos)
      << t.result.output;
  fs::remove_all(t.dir);
}

std::string le64(uint64_t v) {
  std::string hex;
  char buf[3];
  for (int i = 0; i < 8; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", unsigned((v >> (8 * i)) & 0xff));
    hex += buf;
  }
  return hex;
}

// The kernels the stand-in launched, by their mangled names, in order.
std::vector<std::string> launched_kernels(const Trace &t) {
  std::vector<std::string> out;
  for (const std::string &l : t.lines_starting("launch"))
    out.push_back(l.substr(7, l.find(' ', 7) - 7));
  return out;
}

std::string demangled(const std::string &mangled) {
  CommandResult r = run_command("c++filt '" + mangled + "'");
  return r.output.substr(0, r.output.find('\n'));
}

// `func` in a GPU probe holds the kernel's id; the CLI prints the kernel's
// name, demangled, for it (it read the names from the program's fatbins).
// The stand-in writes the printf record the probe would, with the id of
// the kernel it launched.
TEST(GpuAgentStandin, FuncPrintsTheKernelsNameInTextAndJson) {
  REQUIRE_STANDIN_RUN();
  // printf format 0; func: the kernel id, then runtime::gpu::kGpuFuncPid.
  std::string record =
      le64(1) + le64(0) + std::string(16, 'K') + le64(0x800000006b65726eull);
  for (const char *format : {"text", "json"}) {
    SCOPED_TRACE(format);
    Trace t = trace_with_options(
        std::string("-f ") + format, "kernel::* { printf(\"%s\\n\", func); }",
        fixture("multi_kernel", "default", "static") + " 1000",
        "UBT_STANDIN_EVENT=0:" + record);
    EXPECT_EQ(t.result.status, 0) << t.result.output;
    std::vector<std::string> kernels = launched_kernels(t);
    ASSERT_EQ(kernels.size(), 5u) << t.result.output;
    for (const std::string &k : kernels) {
      std::string name = demangled(k);
      std::string want = std::string(format) == "json"
                             ? "\"data\": \"" + name + "\\n\""
                             : "\n" + name + "\n";
      EXPECT_NE(t.result.output.find(want), std::string::npos)
          << want << "\n"
          << t.result.output;
    }
    fs::remove_all(t.dir);
  }
}

// Kernels of a library the program dlopen()s: the CLI could not read them
// at start-up (the program has no CUDA code of its own), so the agent names
// them as it instruments the library's module, and func prints names, not
// ids.
TEST(GpuAgentStandin, FuncNamesKernelsOfALibraryLoadedLater) {
  REQUIRE_STANDIN_RUN();
  const std::string program = fixtures_dir() + "/dlopen_kernels";
  const std::string library = fixtures_dir() + "/libkernel_lib.so";
  if (!fs::exists(program) || !fs::exists(library))
    GTEST_SKIP() << "fixtures dlopen_kernels/libkernel_lib.so not built";
  std::string record =
      le64(1) + le64(0) + std::string(16, 'K') + le64(0x800000006b65726eull);
  Trace t = trace("kernel::* { printf(\"%s\\n\", func); }",
                  program + " " + library + " 1000",
                  "UBT_STANDIN_EVENT=0:" + record);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  EXPECT_NE(t.result.output.find("ran the library's kernels: status 0"),
            std::string::npos)
      << t.result.output;
  std::vector<std::string> kernels = launched_kernels(t);
  ASSERT_EQ(kernels.size(), 3u) << t.result.output;
  for (const std::string &k : kernels) {
    std::string want = "\n" + demangled(k) + "\n";
    EXPECT_NE(t.result.output.find(want), std::string::npos)
        << want << "\n"
        << t.result.output;
  }
  fs::remove_all(t.dir);
}

// `probe` in `kernel::*,kernelret::*` names each kernel and site: the CLI
// read the program's kernels (it names no binary: the traced program's)
// and the rules it compiled compare the context's kernel id with each.
TEST(GpuAgentStandin, ProbeRulesNameTheProgramsKernels) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace("kernel::*,kernelret::* { @[probe] = count(); }",
                  fixture("multi_kernel", "default", "static") + " 1000");
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  std::vector<std::string> kernels = launched_kernels(t);
  ASSERT_EQ(kernels.size(), 5u) << t.result.output;
  std::string ptx = image_ptx(read_file(t.dir + "/image-0.bin"));
  auto module = parse_ptx(ptx);
  ASSERT_TRUE(module) << module.error();
  const PtxFunction *probe = module->find_function("__ubt_probe_p0");
  ASSERT_NE(probe, nullptr);
  std::string body = ptx.substr(probe->begin, probe->end - probe->begin);
  for (const std::string &k : kernels)
    EXPECT_NE(body.find(std::to_string(static_cast<int64_t>(fnv1a64(k)))),
              std::string::npos)
        << k << "\n"
        << body;
  fs::remove_all(t.dir);
}

// A module with SASS only cannot be instrumented: it goes to the driver as
// the application gave it, and the user is told once.
TEST(GpuAgentStandin, ASassOnlyModulePassesThroughWithOneWarning) {
  REQUIRE_STANDIN_RUN();
  std::string exe = fixtures_dir() + "/vector_add_sass_static";
  if (!fs::exists(exe))
    GTEST_SKIP() << "no SASS-only fixture";
  Trace t =
      trace("kernel::vector_add { @threads = count(); }", exe + " 1000 2");
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  std::string warning = "has no PTX (SASS only): its kernels run unprobed";
  size_t at = t.result.output.find(warning);
  ASSERT_NE(at, std::string::npos) << t.result.output;
  EXPECT_EQ(t.result.output.find(warning, at + 1), std::string::npos);
  EXPECT_NE(t.result.output.find("vector_add_sass_static"), std::string::npos);
  auto loads = t.lines_starting("load");
  ASSERT_EQ(loads.size(), 1u);
  std::vector<uint8_t> image = read_file(t.dir + "/image-0.bin");
  auto view = view_image(image);
  ASSERT_TRUE(view) << view.error();
  auto fatbin = parse_fatbin(view->bytes);
  ASSERT_TRUE(fatbin) << fatbin.error();
  for (const FatbinEntry &e : fatbin->entries)
    EXPECT_EQ(e.kind, EntryKind::Cubin); // the original, untouched
  fs::remove_all(t.dir);
}

} // namespace
} // namespace ubtrace::gpu_test
