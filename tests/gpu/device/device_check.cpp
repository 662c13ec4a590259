// The GPU half of the offline checks, for the device machine: rewrite the
// fixtures' fatbins with ubtrace_gpu exactly as the agent will, hand them
// to the real driver (cuModuleLoadDataEx, which must JIT our PTX), launch
// the kernels and read the probes' device maps back.
//
//   ubtrace_gpu_device_check FIXTURES_DIR
//
// Prints one line per check and ends with "N passed, N failed". The driver
// is dlopen'ed (libcuda.so.1), so the binary starts anywhere; without a
// driver or a device it says so and exits 2. Timings are printed, never
// judged.
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/module_rewriter.h"
#include "runtime/gpu/probe_abi.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace ubtrace::runtime::gpu;

struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*primary_retain)(CUcontext *, CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*load)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
  CUresult (*unload)(CUmodule);
  CUresult (*function)(CUfunction *, CUmodule, const char *);
  CUresult (*global)(CUdeviceptr *, size_t *, CUmodule, const char *);
  CUresult (*alloc)(CUdeviceptr *, size_t);
  CUresult (*free)(CUdeviceptr);
  CUresult (*htod)(CUdeviceptr, const void *, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*memset)(CUdeviceptr, unsigned char, size_t);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                     unsigned, unsigned, unsigned, CUstream, void **, void **);
  CUresult (*sync)();
  CUresult (*error_string)(CUresult, const char **);

  bool open(std::string &why) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == nullptr) {
      why = dlerror();
      return false;
    }
    bool ok = true;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (fn == nullptr) {
        why = std::string("libcuda lacks ") + name;
        ok = false;
      }
    };
    sym(init, "cuInit");
    sym(device_get, "cuDeviceGet");
    sym(attribute, "cuDeviceGetAttribute");
    sym(primary_retain, "cuDevicePrimaryCtxRetain");
    sym(set_current, "cuCtxSetCurrent");
    sym(load, "cuModuleLoadDataEx");
    sym(unload, "cuModuleUnload");
    sym(function, "cuModuleGetFunction");
    sym(global, "cuModuleGetGlobal_v2");
    sym(alloc, "cuMemAlloc_v2");
    sym(free, "cuMemFree_v2");
    sym(htod, "cuMemcpyHtoD_v2");
    sym(dtoh, "cuMemcpyDtoH_v2");
    sym(memset, "cuMemsetD8_v2");
    sym(launch, "cuLaunchKernel");
    sym(sync, "cuCtxSynchronize");
    sym(error_string, "cuGetErrorString");
    return ok;
  }
  std::string describe(CUresult rc) {
    const char *text = nullptr;
    error_string(rc, &text);
    return text ? text : std::to_string(rc);
  }
};

Driver cu;
int passed = 0, failed = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  (ok ? passed : failed)++;
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Loads an image with the JIT's error log captured.
CUmodule load(const void *image, const std::string &what) {
  static char log[16384];
  log[0] = 0;
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof log)};
  CUmodule module = nullptr;
  CUresult rc = cu.load(&module, image, 2, options, values);
  check(rc == CUDA_SUCCESS,
        "load " + what +
            (rc ? " (" + cu.describe(rc) + ") " + log : std::string()));
  return rc == CUDA_SUCCESS ? module : nullptr;
}

uint64_t read_u64(CUmodule m, const char *name, size_t index) {
  CUdeviceptr at = 0;
  size_t size = 0;
  uint64_t value = ~uint64_t{0};
  if (cu.global(&at, &size, m, name) == CUDA_SUCCESS && (index + 1) * 8 <= size)
    cu.dtoh(&value, at + index * 8, 8);
  return value;
}

unsigned slot_of(const std::string &kernel, unsigned site) {
  return static_cast<unsigned>((fnv1a64(kernel) ^ site) % 64);
}

// The module fatbin (wrapper version 1) of a fixture, copied out.
std::vector<uint8_t> module_fatbin(const std::string &path) {
  std::vector<uint8_t> file = read_file(path);
  auto found = find_elf_fatbins(file);
  if (found)
    for (const ElfFatbin &f : found->fatbins)
      if (f.wrapper_version == kFatbinWrapperVersionModule)
        return std::vector<uint8_t>(f.fatbin.bytes.begin(),
                                    f.fatbin.bytes.end());
  return {};
}

double vector_add_run(CUmodule m, int n, int repeat, bool verify) {
  const char *name = "_Z10vector_addPKfS0_Pfi";
  CUfunction fn = nullptr;
  if (cu.function(&fn, m, name) != CUDA_SUCCESS) {
    check(false, "vector_add kernel found");
    return 0;
  }
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000);
    b[i] = static_cast<float>(i % 7);
  }
  CUdeviceptr da, db, dc;
  size_t bytes = sizeof(float) * n;
  cu.alloc(&da, bytes);
  cu.alloc(&db, bytes);
  cu.alloc(&dc, bytes);
  cu.htod(da, a.data(), bytes);
  cu.htod(db, b.data(), bytes);
  void *args[] = {&da, &db, &dc, &n};
  unsigned block = 256, grid = (n + block - 1) / block;
  cu.launch(fn, grid, 1, 1, block, 1, 1, 0, nullptr, args, nullptr); // warm
  cu.sync();
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeat; ++r)
    cu.launch(fn, grid, 1, 1, block, 1, 1, 0, nullptr, args, nullptr);
  CUresult rc = cu.sync();
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  if (verify) {
    check(rc == CUDA_SUCCESS, "vector_add runs (" + cu.describe(rc) + ")");
    cu.dtoh(c.data(), dc, bytes);
    bool same = true;
    for (int i = 0; i < n; ++i)
      same &= c[i] == a[i] + b[i];
    check(same, "vector_add computes the same sums instrumented");
  }
  cu.free(da);
  cu.free(db);
  cu.free(dc);
  return ms;
}

void check_vector_add(const std::string &dir, ModuleRewriter &rewriter) {
  const int n = 1 << 22, repeat = 50;
  for (const char *variant : {"default", "nocompress", "compressall", "lz4"}) {
    std::string fixture = dir + "/vector_add_" + variant + "_static";
    std::vector<uint8_t> fatbin = module_fatbin(fixture);
    auto out = rewriter.rewrite(static_cast<const void *>(fatbin.data()));
    if (!out || (*out)->outcome != RewriteOutcome::Instrumented) {
      check(false, std::string("rewrite ") + variant);
      continue;
    }
    CUmodule plain = load(fatbin.data(), std::string("plain ") + variant);
    CUmodule probed =
        load((*out)->driver_image(), std::string("instrumented ") + variant);
    if (!plain || !probed)
      continue;
    double base = vector_add_run(plain, n, repeat, false);
    CUdeviceptr counts = 0;
    size_t size = 0;
    cu.global(&counts, &size, probed, "__ubt_map_count");
    cu.memset(counts, 0, size);
    CUdeviceptr bare = 0;
    cu.global(&bare, &size, probed, "__ubt_map_bare_count");
    cu.memset(bare, 0, size);
    double traced = vector_add_run(probed, n, 0, true);
    const std::string kernel = "_Z10vector_addPKfS0_Pfi";
    unsigned threads = ((n + 255) / 256) * 256;
    uint64_t entries = read_u64(probed, "__ubt_map_count",
                                slot_of(kernel, UBT_GPU_SITE_ENTRY));
    check(entries == threads,
          "entry probe fired once per thread: " + std::to_string(entries) +
              " of " + std::to_string(threads));
    uint64_t exits = read_u64(probed, "__ubt_map_bare_count", 0);
    check(exits == threads,
          "exit probe fired once per thread: " + std::to_string(exits));
    traced = vector_add_run(probed, n, repeat, false);
    std::printf("time: vector_add %s n=%d x%d: plain %.2f ms, "
                "instrumented %.2f ms (x%.2f)\n",
                variant, n, repeat, base, traced,
                base > 0 ? traced / base : 0.0);
    cu.unload(plain);
    cu.unload(probed);
  }
}

void check_param_types(const std::string &dir, const std::string &probes) {
  ProbeProgram program;
  program.ptx = probes;
  program.attachments = {{ProbeSite::Entry, "*", "__ubt_probe_args"}};
  auto rewriter = ModuleRewriter::create(program, {0});
  std::vector<uint8_t> fatbin =
      module_fatbin(dir + "/param_types_default_static");
  auto out = (*rewriter)->rewrite(static_cast<const void *>(fatbin.data()));
  if (!out || (*out)->outcome != RewriteOutcome::Instrumented) {
    check(false, "rewrite param_types");
    return;
  }
  CUmodule m = load((*out)->driver_image(), "instrumented param_types");
  CUfunction fn = nullptr;
  if (!m || cu.function(&fn, m, "_Z12mixed_paramsifPf4Pairx") != 0) {
    check(false, "mixed_params kernel found");
    return;
  }
  struct Pair {
    int first;
    float second;
    short third;
  } pair{10, 0.5f, 3};
  int count = 64;
  float scale = 2.0f;
  long long offset = 1LL << 33;
  CUdeviceptr out_buf = 0;
  cu.alloc(&out_buf, count * sizeof(float));
  void *args[] = {&count, &scale, &out_buf, &pair, &offset};
  CUresult rc = cu.launch(fn, 1, 1, 1, count, 1, 1, 0, nullptr, args, nullptr);
  if (rc == CUDA_SUCCESS)
    rc = cu.sync();
  check(rc == CUDA_SUCCESS, "mixed_params runs (" + cu.describe(rc) + ")");
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale, 4);
  uint64_t n = static_cast<uint64_t>(count);
  check(read_u64(m, "__ubt_map_arg_sum", 0) == n * count, "arg0 (int)");
  check(read_u64(m, "__ubt_map_arg_sum", 1) == n * scale_bits,
        "arg1 (float bits)");
  check(read_u64(m, "__ubt_map_arg_sum", 2) == n * out_buf, "arg2 (pointer)");
  check(read_u64(m, "__ubt_map_arg_sum", 4) == n * uint64_t(offset),
        "arg4 (long long)");
  cu.free(out_buf);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  std::string why;
  if (!cu.open(why)) {
    std::printf("no CUDA driver: %s\n", why.c_str());
    return 2;
  }
  CUdevice dev;
  CUcontext ctx;
  if (cu.init(0) != CUDA_SUCCESS || cu.device_get(&dev, 0) != CUDA_SUCCESS ||
      cu.primary_retain(&ctx, dev) != CUDA_SUCCESS ||
      cu.set_current(ctx) != CUDA_SUCCESS) {
    std::printf("no usable CUDA device\n");
    return 2;
  }
  int major = 0, minor = 0;
  cu.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu.attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  uint32_t sm = static_cast<uint32_t>(major * 10 + minor);
  std::printf("device: sm_%u\n", sm);

  std::vector<uint8_t> probes_bytes = read_file(dir + "/probes.ptx");
  std::string probes(probes_bytes.begin(), probes_bytes.end());
  ProbeProgram program;
  program.ptx = probes;
  program.attachments = {{ProbeSite::Entry, "*", "__ubt_probe_count"},
                         {ProbeSite::Exit, "*", "__ubt_probe_bare"}};
  auto rewriter = ModuleRewriter::create(program, {sm});
  if (!rewriter) {
    std::printf("FAIL: probe program: %s\n", rewriter.error().c_str());
    return 1;
  }
  check_vector_add(dir, **rewriter);
  check_param_types(dir, probes);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
