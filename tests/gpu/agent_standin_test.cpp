// The agent's CUDA interception with real nvcc-built applications, their
// real CUDA runtime (static and shared) and ubtrace itself; only the
// driver is a stand-in (tests/gpu/standin/libcuda_standin.c, loaded as
// libcuda.so.1 through LD_LIBRARY_PATH): it records every image it is
// asked to load and every launch, and keeps "device" memory in host memory.
// These tests prove that module loads reach the rewriter, that the driver
// receives the rewritten image (checked again by ptxas and nvJitLink), that
// device maps are allocated where the baked table says, and, where the
// stand-in runs the launched kernels' PTX on the host (UBT_STANDIN_EXEC=1,
// tests/gpu/ptxsim), that what the injected probes computed is read back
// and printed.
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

// The trace printed `text` (else a failure that shows what it printed).
void expect_printed(const Trace &t, const std::string &text) {
  EXPECT_NE(t.result.output.find(text), std::string::npos)
      << text << "\n"
      << t.result.output;
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

// The stand-in runs each launched kernel's PTX, probes included (ptxsim).
const char *const kExecute = "UBT_STANDIN_EXEC=1";
// One line per kernel launch: its first thread prints func.
const char *const kFirstThreadPrintsFunc =
    "kernel::* /blockIdx.x == 0 && threadIdx.x == 0/ { "
    "printf(\"%s\\n\", func); }";

// `program` dlopen()s `library`, a library of kernels, and runs them.
#define REQUIRE_DLOPEN_FIXTURES()                                              \
  REQUIRE_STANDIN_RUN();                                                       \
  const std::string program = fixtures_dir() + "/dlopen_kernels";              \
  const std::string library = fixtures_dir() + "/libkernel_lib.so";            \
  if (!fs::exists(program) || !fs::exists(library))                           \
  GTEST_SKIP() << "fixtures dlopen_kernels/libkernel_lib.so not built"

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
// stand-in runs each launch's PTX (ptxsim): the count() probe the agent
// injected adds one per thread.
TEST(GpuAgentStandin, DeviceMapsAreReadBackAtExitAndPrinted) {
  REQUIRE_STANDIN_RUN();
  for (const char *rt : {"static", "shared"}) {
    SCOPED_TRACE(rt);
    // 1000 elements in blocks of 256: 4 blocks; 3 launches.
    Trace t = trace("kernel::vector_add { @threads = count(); }",
                    fixture("vector_add", "default", rt) + " 1000 3",
                    kExecute);
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
                  exe + " 1000 2", kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  // 2 launches x 1024 threads on the GPU, main once on the CPU.
  EXPECT_NE(t.result.output.find("@c: 2049\n"), std::string::npos)
      << t.result.output;
  EXPECT_NE(t.result.output.find("@main: 1\n"), std::string::npos)
      << t.result.output;
  fs::remove_all(t.dir);
}

// printf() on the GPU writes the device events ring; the agent drains it
// into the region's ring and the CLI prints it like a CPU probe's event:
// one line per thread of each launch (2 x 1024), with its own argument.
TEST(GpuAgentStandin, DeviceEventsAreDrainedAndPrinted) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace("kernel::vector_add { printf(\"hello %d\\n\", "
                  "blockIdx.x * 256 + threadIdx.x); }",
                  fixture("vector_add", "default", "static") + " 1000 2",
                  kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  std::map<std::string, int> lines;
  std::istringstream out(t.result.output);
  for (std::string line; std::getline(out, line);)
    if (line.rfind("hello ", 0) == 0)
      lines[line]++;
  EXPECT_EQ(lines.size(), 1024u) << t.result.output.substr(0, 2000);
  for (int i = 0; i < 1024; ++i)
    EXPECT_EQ(lines["hello " + std::to_string(i)], 2) << i;
  fs::remove_all(t.dir);
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
TEST(GpuAgentStandin, FuncPrintsTheKernelsNameInTextAndJson) {
  REQUIRE_STANDIN_RUN();
  for (const char *format : {"text", "json"}) {
    SCOPED_TRACE(format);
    Trace t = trace_with_options(
        std::string("-f ") + format, kFirstThreadPrintsFunc,
        fixture("multi_kernel", "default", "static") + " 1000", kExecute);
    EXPECT_EQ(t.result.status, 0) << t.result.output;
    std::vector<std::string> kernels = launched_kernels(t);
    ASSERT_EQ(kernels.size(), 5u) << t.result.output;
    for (const std::string &k : kernels) {
      std::string name = demangled(k);
      std::string want = std::string(format) == "json"
                             ? "\"data\": \"" + name + "\\n\""
                             : "\n" + name + "\n";
      expect_printed(t, want);
    }
    fs::remove_all(t.dir);
  }
}

// Kernels of a library the program dlopen()s: the CLI could not read them
// at start-up (the program has no CUDA code of its own), so the agent names
// them as it instruments the library's module, and func prints names, not
// ids.
TEST(GpuAgentStandin, FuncNamesKernelsOfALibraryLoadedLater) {
  REQUIRE_DLOPEN_FIXTURES();
  Trace t = trace(kFirstThreadPrintsFunc, program + " " + library + " 1000",
                  kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  EXPECT_NE(t.result.output.find("ran the library's kernels: status 0"),
            std::string::npos)
      << t.result.output;
  std::vector<std::string> kernels = launched_kernels(t);
  ASSERT_EQ(kernels.size(), 3u) << t.result.output;
  for (const std::string &k : kernels) {
    std::string want = "\n" + demangled(k) + "\n";
    expect_printed(t, want);
  }
  fs::remove_all(t.dir);
}

// `probe` for the kernels of a library the program dlopen()s: the CLI did
// not know them when it compiled, so the probes give late ids
// (runtime::gpu::late_probe_id), which the CLI names by the same rules once
// the agent has reported the kernels: kernel::MANGLED, per site.
TEST(GpuAgentStandin, ProbeNamesKernelsOfALibraryLoadedLater) {
  REQUIRE_DLOPEN_FIXTURES();
  for (const char *format : {"text", "json"}) {
    SCOPED_TRACE(format);
    Trace t = trace_with_options(
        std::string("-f ") + format,
        "kernel::*,kernelret::* { @[probe] = count(); } "
        "kernel::lib_fill,kernel::*scale* /threadIdx.x == 0/ { "
        "@first[probe] = count(); }",
        program + " " + library + " 1000", kExecute);
    EXPECT_EQ(t.result.status, 0) << t.result.output;
    std::vector<std::string> kernels = launched_kernels(t);
    ASSERT_EQ(kernels.size(), 3u) << t.result.output;
    const bool json = std::string(format) == "json";
    // 8 blocks of 128 threads each (n = 1000).
    for (const std::string &k : kernels) {
      for (const char *site : {"kernel", "kernelret"}) {
        std::string name = std::string(site) + "::" + k;
        std::string want = json ? "\"" + name + "\": 1024"
                                : "@[" + name + "]: 1024\n";
        expect_printed(t, want);
      }
      // The second block: lib_fill is named as written, the templates by
      // the wildcard that matched them; one thread per block.
      std::string name =
          k == "lib_fill" ? "kernel::lib_fill" : "kernel::" + k;
      std::string want =
          json ? "\"" + name + "\": 8" : "@first[" + name + "]: 8\n";
      expect_printed(t, want);
    }
    fs::remove_all(t.dir);
  }
}

// kernel:BIN:NAME with a library by name (`libkernel_lib.so`, or `libkernel_lib`
// as uprobes take `libc`) attaches to the kernels of that library wherever
// the program loads it from; another library's name attaches to nothing.
TEST(GpuAgentStandin, AKernelLibraryCanBeNamedByItsFileName) {
  REQUIRE_DLOPEN_FIXTURES();
  Trace t = trace("kernel:libkernel_lib.so:lib_fill { @fill = count(); } "
                  "kernel:libkernel_lib:* { @[probe] = count(); } "
                  "kernel:libother_lib.so:* { @other = count(); }",
                  program + " " + library + " 1000", kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  const std::string &out = t.result.output;
  EXPECT_NE(out.find("@fill: 1024\n"), std::string::npos) << out;
  for (const char *k : {"lib_fill", "_ZN7ubt_lib5scaleIfEEvPT_S1_i",
                        "_ZN7ubt_lib5scaleIiEEvPT_S1_i"})
    EXPECT_NE(out.find("@[kernel:libkernel_lib:" + std::string(k) +
                       "]: 1024\n"),
              std::string::npos)
        << k << "\n"
        << out;
  EXPECT_EQ(out.find("@other"), std::string::npos) << out;
  fs::remove_all(t.dir);
}

// `probe` in `kernel::*,kernelret::*` names each kernel and site: the CLI
// read the program's kernels (it names no binary: the traced program's)
// and the rules it compiled compare the context's kernel id with each.
TEST(GpuAgentStandin, ProbeRulesNameTheProgramsKernels) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace("kernel::*,kernelret::* { @[probe] = count(); }",
                  fixture("multi_kernel", "default", "static") + " 1000",
                  kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  std::vector<std::string> kernels = launched_kernels(t);
  ASSERT_EQ(kernels.size(), 5u) << t.result.output;
  // Each of the 5 launches runs 8 blocks of 128 threads; each thread
  // enters and leaves once (early_exit's extra ones through `exit`).
  for (const std::string &k : kernels)
    for (const char *site : {"kernel", "kernelret"})
      EXPECT_NE(t.result.output.find("@[" + std::string(site) + "::" + k +
                                     "]: 1024\n"),
                std::string::npos)
          << site << " " << k << "\n"
          << t.result.output;
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

// Each GPU builtin on every thread of a launch, with the stand-in running
// the kernel: matmul 64 is 4 x 4 blocks of 16 x 16 threads.
TEST(GpuAgentStandin, GpuBuiltinsHoldEachThreadsValues) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace(
      "kernel::matmul_tiled { @tx[threadIdx.x] = count(); "
      "@ty = lhist(threadIdx.y, 0, 16, 4); "
      "@blocks[blockIdx.x, blockIdx.y] = count(); "
      "@dims = max(blockDim.x * 1000000 + blockDim.y * 10000 + "
      "gridDim.x * 100 + gridDim.y); "
      "@z = max(threadIdx.z + blockIdx.z * 10 + blockDim.z * 100 + "
      "gridDim.z * 1000); "
      "@lanes = lhist(laneid, 0, 32, 8); @warps = sum(warpid < 64); "
      "@n = min(arg3); @t = min(nsecs > 0); } "
      "kernelret::matmul_tiled { @ret = count(); @avg = avg(threadIdx.x); "
      "@st = stats(threadIdx.y); }",
      fixture("matmul", "default", "static") + " 64", kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  const std::string &out = t.result.output;
  std::vector<std::string> want = {
      "@dims: 16160404\n", "@z: 1100\n", "@n: 64\n", "@t: 1\n",
      "@warps: 4096\n", "@ret: 4096\n", "@avg: 7\n",
      "@st: { .count = 4096, .average = 7, .total = 30720 }\n"};
  for (int x = 0; x < 16; ++x)
    want.push_back("@tx[" + std::to_string(x) + "]: 256\n");
  for (int bx = 0; bx < 4; ++bx)
    for (int by = 0; by < 4; ++by)
      want.push_back("@blocks[" + std::to_string(bx) + ", " +
                     std::to_string(by) + "]: 256\n");
  for (const char *bucket : {"[0, 4)", "[4, 8)", "[8, 12)", "[12, 16)"})
    want.push_back(std::string(bucket));
  for (const std::string &w : want)
    EXPECT_NE(out.find(w), std::string::npos) << w << "\n" << out;
  // lhist rows: 1024 samples in each bucket of threadIdx.y and laneid.
  size_t rows = 0;
  for (size_t at = out.find("1024 |"); at != std::string::npos;
       at = out.find("1024 |", at + 1))
    ++rows;
  EXPECT_EQ(rows, 8u) << out;
  EXPECT_NE(out.find("matmul n=64 checksum="), std::string::npos) << out;
  fs::remove_all(t.dir);
}

// More printf records than the device ring holds between drains: what is
// not printed is counted as lost, exactly. 2 launches of 131072 threads,
// each record ~350 bytes (five 64-byte strings: a[0] is 0.0, so they print
// empty): 44 MiB per launch into a 1 MiB ring drained every 50 ms.
TEST(GpuAgentStandin, DeviceEventsThatDoNotFitAreCountedLost) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace("kernel::vector_add { printf(\"e %s%s%s%s%s %d\\n\", "
                  "str(arg0), str(arg0), str(arg0), str(arg0), str(arg0), "
                  "arg3); }",
                  fixture("vector_add", "default", "static") + " 131072 2",
                  kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output.substr(0, 4000);
  uint64_t printed = 0, lost = 0;
  std::istringstream out(t.result.output);
  for (std::string line; std::getline(out, line);) {
    if (line.rfind("e ", 0) == 0 && line.size() > 7 &&
        line.substr(line.size() - 7) == " 131072")
      ++printed;
    unsigned long long n = 0;
    if (std::sscanf(line.c_str(), "Lost %llu events", &n) == 1)
      lost += n;
  }
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(printed + lost, 2u * 131072u)
      << "printed " << printed << " lost " << lost;
  fs::remove_all(t.dir);
}

// interval probes read the device maps back while the program runs: each
// value printed is at most the final one, and the final one is exact.
TEST(GpuAgentStandin, IntervalPrintsReadDeviceMapsBackWhileTheProgramRuns) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace("kernel::vector_add { @c = count(); } "
                  "interval:ms:20 { print(@c); }",
                  fixture("vector_add", "default", "static") + " 65536 100",
                  kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  std::vector<uint64_t> values;
  std::istringstream out(t.result.output);
  for (std::string line; std::getline(out, line);) {
    unsigned long long n = 0;
    if (std::sscanf(line.c_str(), "@c: %llu", &n) == 1)
      values.push_back(n);
  }
  ASSERT_GE(values.size(), 2u) << t.result.output;
  EXPECT_EQ(values.back(), 100u * 65536u);
  for (size_t i = 1; i < values.size(); ++i)
    EXPECT_LE(values[i - 1], values[i]) << i;
  EXPECT_LT(values.front(), values.back()) << t.result.output;
  fs::remove_all(t.dir);
}

// A keyed map on the device stops at max_entries (4096) keys: the rest of
// the updates are dropped at once and counted, as bpftrace's full maps are.
// 65536 threads, each its own key.
TEST(GpuAgentStandin, AFullDeviceHashRefusesNewKeysAndCountsThem) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace("kernel::vector_add { @k[blockIdx.x * 256 + threadIdx.x] = "
                  "count(); }",
                  fixture("vector_add", "default", "static") + " 65536 1",
                  kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output.substr(0, 2000);
  size_t keys = 0;
  std::istringstream out(t.result.output);
  for (std::string line; std::getline(out, line);)
    keys += line.rfind("@k[", 0) == 0 && line.substr(line.size() - 3) == ": 1";
  EXPECT_EQ(keys, 4096u);
  EXPECT_NE(t.result.output.find("map @k dropped 61440 update(s)"),
            std::string::npos)
      << t.result.output.substr(t.result.output.size() - 2000);
  fs::remove_all(t.dir);
}

// Deleting and adding the same keys again (a start time per block, deleted
// at the block's end) reuses their buckets: 60 launches of 256 blocks claim
// 256 buckets, not 15360, so nothing is dropped.
TEST(GpuAgentStandin, DeletedDeviceKeysComeBackInTheirBuckets) {
  REQUIRE_STANDIN_RUN();
  Trace t = trace("kernel::vector_add /threadIdx.x == 0/ { "
                  "@start[blockIdx.x] = nsecs; } "
                  "kernelret::vector_add /threadIdx.x == 0/ { "
                  "@n = count(); @since = max(@start[blockIdx.x] > 0); "
                  "delete(@start[blockIdx.x]); }",
                  fixture("vector_add", "default", "static") + " 65536 60",
                  kExecute);
  EXPECT_EQ(t.result.status, 0) << t.result.output;
  EXPECT_NE(t.result.output.find("@n: 15360\n"), std::string::npos)
      << t.result.output;
  EXPECT_NE(t.result.output.find("@since: 1\n"), std::string::npos)
      << t.result.output;
  EXPECT_EQ(t.result.output.find("@start["), std::string::npos)
      << t.result.output;
  EXPECT_EQ(t.result.output.find("dropped"), std::string::npos)
      << t.result.output;
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
