// Where CUDA driver calls pass through the agent. The CUDA runtime (static
// or shared) and most driver-API programs look the driver's entry points up
// with dlsym(libcuda, NAME) and, from CUDA 12 on, cuGetProcAddress(_v2).
// libubtrace_preload.so (which LD_PRELOAD names, so it comes before libc in
// symbol lookup) defines dlsym and passes every result for a "cu" name
// here; cuGetProcAddress is itself handed out wrapped. The functions that
// load code, launch it or tear contexts down come back as the wrappers
// below, which call the real entry point the lookup returned.
#include "runtime/agent/gpu/cuda_api.h"
#include "runtime/agent/gpu/gpu_runtime.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace ubtrace::agent::gpu {
namespace {

enum class Entry : uint8_t {
  ModuleLoadData,
  ModuleLoadDataEx,
  ModuleLoadFatBinary,
  ModuleLoad,
  LibraryLoadData,
  LibraryLoadFromFile,
  LaunchKernel,
  LaunchKernelPtsz,
  LaunchKernelEx,
  LaunchKernelExPtsz,
  CtxDestroy,
  PrimaryCtxRelease,
  PrimaryCtxReset,
  GetProcAddress,   // v1: 4 arguments
  GetProcAddressV2, // 5 arguments (CUDA 12+)
  Count,
};

// The real entry point each wrapper calls: the last one a lookup returned.
std::atomic<void *> g_real[size_t(Entry::Count)];

template <class Fn> Fn real(Entry e) {
  return reinterpret_cast<Fn>(
      g_real[size_t(e)].load(std::memory_order_acquire));
}

GpuRuntime &rt() {
  return GpuRuntime::instance();
}

// A file the application names: read it whole (the driver would), so the
// image can be rewritten like an embedded one.
const std::vector<uint8_t> *read_image(const char *path) {
  static std::vector<std::unique_ptr<std::vector<uint8_t>>> kept;
  FILE *f = path ? std::fopen(path, "rb") : nullptr;
  if (!f)
    return nullptr;
  auto bytes = std::make_unique<std::vector<uint8_t>>();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    bytes->insert(bytes->end(), buf, buf + n);
  std::fclose(f);
  bytes->push_back(0); // PTX files are text: the driver wants the NUL
  kept.push_back(std::move(bytes));
  return kept.back().get();
}

// ---- loaders ----

CUresult w_cuModuleLoadData(CUmodule *module, const void *image) {
  auto fn = real<cuModuleLoadData_t>(Entry::ModuleLoadData);
  return fn ? fn(module, rt().image_for_driver(image, nullptr))
            : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned n,
                              CUjit_option *options, void **values) {
  auto fn = real<cuModuleLoadDataEx_t>(Entry::ModuleLoadDataEx);
  return fn ? fn(module, rt().image_for_driver(image, nullptr), n, options,
                 values)
            : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuModuleLoadFatBinary(CUmodule *module, const void *image) {
  auto fn = real<cuModuleLoadFatBinary_t>(Entry::ModuleLoadFatBinary);
  return fn ? fn(module, rt().image_for_driver(image, nullptr))
            : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuLibraryLoadData(CUlibrary *library, const void *code,
                             CUjit_option *jit, void **jit_values,
                             unsigned jit_n, CUlibraryOption *lib,
                             void **lib_values, unsigned lib_n) {
  auto fn = real<cuLibraryLoadData_t>(Entry::LibraryLoadData);
  return fn ? fn(library, rt().image_for_driver(code, nullptr), jit, jit_values,
                 jit_n, lib, lib_values, lib_n)
            : CUDA_ERROR_NOT_FOUND;
}

// The driver's own in-memory loader, for a file we rewrote: the one the
// application looked up, or libcuda's.
template <class Fn> Fn loader(Entry e, const char *name) {
  if (auto fn = real<Fn>(e))
    return fn;
  return reinterpret_cast<Fn>(rt().driver_symbol(name));
}

CUresult w_cuModuleLoad(CUmodule *module, const char *path) {
  auto fn = real<cuModuleLoad_t>(Entry::ModuleLoad);
  const std::vector<uint8_t> *bytes = read_image(path);
  if (bytes) {
    const void *image = rt().image_for_driver(bytes->data(), path);
    auto load =
        loader<cuModuleLoadData_t>(Entry::ModuleLoadData, "cuModuleLoadData");
    if (image != bytes->data() && load)
      return load(module, image);
  }
  return fn ? fn(module, path) : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuLibraryLoadFromFile(CUlibrary *library, const char *path,
                                 CUjit_option *jit, void **jit_values,
                                 unsigned jit_n, CUlibraryOption *lib,
                                 void **lib_values, unsigned lib_n) {
  auto fn = real<cuLibraryLoadFromFile_t>(Entry::LibraryLoadFromFile);
  const std::vector<uint8_t> *bytes = read_image(path);
  if (bytes) {
    const void *image = rt().image_for_driver(bytes->data(), path);
    auto load = loader<cuLibraryLoadData_t>(Entry::LibraryLoadData,
                                            "cuLibraryLoadData");
    if (image != bytes->data() && load)
      return load(library, image, jit, jit_values, jit_n, lib, lib_values,
                  lib_n);
  }
  return fn ? fn(library, path, jit, jit_values, jit_n, lib, lib_values, lib_n)
            : CUDA_ERROR_NOT_FOUND;
}

// ---- launches ----

CUresult launch(Entry e, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                unsigned bx, unsigned by, unsigned bz, unsigned shared,
                CUstream stream, void **params, void **extra) {
  rt().launched();
  auto fn = real<cuLaunchKernel_t>(e);
  return fn ? fn(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra)
            : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz,
                          unsigned shared, CUstream stream, void **params,
                          void **extra) {
  return launch(Entry::LaunchKernel, f, gx, gy, gz, bx, by, bz, shared, stream,
                params, extra);
}

CUresult w_cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream stream,
                               void **params, void **extra) {
  return launch(Entry::LaunchKernelPtsz, f, gx, gy, gz, bx, by, bz, shared,
                stream, params, extra);
}

CUresult w_cuLaunchKernelEx(const void *config, CUfunction f, void **params,
                            void **extra) {
  rt().launched();
  auto fn = real<cuLaunchKernelEx_t>(Entry::LaunchKernelEx);
  return fn ? fn(config, f, params, extra) : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuLaunchKernelEx_ptsz(const void *config, CUfunction f,
                                 void **params, void **extra) {
  rt().launched();
  auto fn = real<cuLaunchKernelEx_t>(Entry::LaunchKernelExPtsz);
  return fn ? fn(config, f, params, extra) : CUDA_ERROR_NOT_FOUND;
}

// ---- teardown: read the device maps back while they still exist ----

CUresult w_cuCtxDestroy(CUcontext ctx) {
  if (rt().holds_maps(ctx))
    rt().before_teardown("cuCtxDestroy");
  auto fn = real<cuCtxDestroy_t>(Entry::CtxDestroy);
  return fn ? fn(ctx) : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuDevicePrimaryCtxRelease(CUdevice device) {
  if (rt().holds_maps_on(device))
    rt().before_teardown("cuDevicePrimaryCtxRelease");
  auto fn = real<cuDevicePrimaryCtxRelease_t>(Entry::PrimaryCtxRelease);
  return fn ? fn(device) : CUDA_ERROR_NOT_FOUND;
}

CUresult w_cuDevicePrimaryCtxReset(CUdevice device) {
  if (rt().holds_maps_on(device))
    rt().before_teardown("cuDevicePrimaryCtxReset");
  auto fn = real<cuDevicePrimaryCtxReset_t>(Entry::PrimaryCtxReset);
  return fn ? fn(device) : CUDA_ERROR_NOT_FOUND;
}

// ---- lookups ----

void *wrapper_of(Entry e) {
  switch (e) {
  case Entry::ModuleLoadData:
    return reinterpret_cast<void *>(&w_cuModuleLoadData);
  case Entry::ModuleLoadDataEx:
    return reinterpret_cast<void *>(&w_cuModuleLoadDataEx);
  case Entry::ModuleLoadFatBinary:
    return reinterpret_cast<void *>(&w_cuModuleLoadFatBinary);
  case Entry::ModuleLoad:
    return reinterpret_cast<void *>(&w_cuModuleLoad);
  case Entry::LibraryLoadData:
    return reinterpret_cast<void *>(&w_cuLibraryLoadData);
  case Entry::LibraryLoadFromFile:
    return reinterpret_cast<void *>(&w_cuLibraryLoadFromFile);
  case Entry::LaunchKernel:
    return reinterpret_cast<void *>(&w_cuLaunchKernel);
  case Entry::LaunchKernelPtsz:
    return reinterpret_cast<void *>(&w_cuLaunchKernel_ptsz);
  case Entry::LaunchKernelEx:
    return reinterpret_cast<void *>(&w_cuLaunchKernelEx);
  case Entry::LaunchKernelExPtsz:
    return reinterpret_cast<void *>(&w_cuLaunchKernelEx_ptsz);
  case Entry::CtxDestroy:
    return reinterpret_cast<void *>(&w_cuCtxDestroy);
  case Entry::PrimaryCtxRelease:
    return reinterpret_cast<void *>(&w_cuDevicePrimaryCtxRelease);
  case Entry::PrimaryCtxReset:
    return reinterpret_cast<void *>(&w_cuDevicePrimaryCtxReset);
  case Entry::GetProcAddress:
  case Entry::GetProcAddressV2:
  case Entry::Count:
    break;
  }
  return nullptr;
}

CUresult w_cuGetProcAddress(const char *, void **, int, cuuint64_t);
CUresult w_cuGetProcAddress_v2(const char *, void **, int, cuuint64_t, int *);

// The entry an exported symbol name stands for ("cuCtxDestroy_v2" ->
// CtxDestroy, "cuLaunchKernel_ptsz" -> LaunchKernelPtsz), or Count.
Entry entry_for_symbol(const char *name) {
  struct Named {
    const char *name;
    Entry entry;
  };
  static const Named table[] = {
      {"cuModuleLoadData", Entry::ModuleLoadData},
      {"cuModuleLoadDataEx", Entry::ModuleLoadDataEx},
      {"cuModuleLoadFatBinary", Entry::ModuleLoadFatBinary},
      {"cuModuleLoad", Entry::ModuleLoad},
      {"cuLibraryLoadData", Entry::LibraryLoadData},
      {"cuLibraryLoadFromFile", Entry::LibraryLoadFromFile},
      {"cuLaunchKernel", Entry::LaunchKernel},
      {"cuLaunchKernel_ptsz", Entry::LaunchKernelPtsz},
      {"cuLaunchKernelEx", Entry::LaunchKernelEx},
      {"cuLaunchKernelEx_ptsz", Entry::LaunchKernelExPtsz},
      {"cuCtxDestroy", Entry::CtxDestroy},
      {"cuCtxDestroy_v2", Entry::CtxDestroy},
      {"cuDevicePrimaryCtxRelease", Entry::PrimaryCtxRelease},
      {"cuDevicePrimaryCtxRelease_v2", Entry::PrimaryCtxRelease},
      {"cuDevicePrimaryCtxReset", Entry::PrimaryCtxReset},
      {"cuDevicePrimaryCtxReset_v2", Entry::PrimaryCtxReset},
      {"cuGetProcAddress", Entry::GetProcAddress},
      {"cuGetProcAddress_v2", Entry::GetProcAddressV2},
  };
  for (const Named &n : table)
    if (std::strcmp(n.name, name) == 0)
      return n.entry;
  return Entry::Count;
}

// The wrapper to hand out for `real`, remembering it.
void *wrap(Entry e, void *real_fn) {
  if (e == Entry::Count || !real_fn)
    return real_fn;
  // Asked for one of our own wrappers (a lookup through a wrapper): as is.
  for (size_t i = 0; i < size_t(Entry::Count); ++i)
    if (real_fn == wrapper_of(Entry(i)))
      return real_fn;
  if (real_fn == reinterpret_cast<void *>(&w_cuGetProcAddress) ||
      real_fn == reinterpret_cast<void *>(&w_cuGetProcAddress_v2))
    return real_fn;
  g_real[size_t(e)].store(real_fn, std::memory_order_release);
  if (e == Entry::GetProcAddress)
    return reinterpret_cast<void *>(&w_cuGetProcAddress);
  if (e == Entry::GetProcAddressV2)
    return reinterpret_cast<void *>(&w_cuGetProcAddress_v2);
  return wrapper_of(e);
}

// cuGetProcAddress takes base names; the flags pick per-thread-stream
// variants, the version picks cuGetProcAddress's own signature.
Entry entry_for_query(const char *symbol, int cuda_version, cuuint64_t flags) {
  Entry e = entry_for_symbol(symbol);
  bool ptsz = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if (e == Entry::LaunchKernel && ptsz)
    return Entry::LaunchKernelPtsz;
  if (e == Entry::LaunchKernelEx && ptsz)
    return Entry::LaunchKernelExPtsz;
  if (e == Entry::GetProcAddress && cuda_version >= 12000)
    return Entry::GetProcAddressV2;
  return e;
}

CUresult w_cuGetProcAddress(const char *symbol, void **pfn, int cuda_version,
                            cuuint64_t flags) {
  auto fn = real<cuGetProcAddress_t>(Entry::GetProcAddress);
  if (!fn)
    return CUDA_ERROR_NOT_FOUND;
  CUresult rc = fn(symbol, pfn, cuda_version, flags);
  if (rc == CUDA_SUCCESS && pfn && symbol)
    *pfn = wrap(entry_for_query(symbol, cuda_version, flags), *pfn);
  return rc;
}

CUresult w_cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version,
                               cuuint64_t flags, int *status) {
  auto fn = real<cuGetProcAddress_v2_t>(Entry::GetProcAddressV2);
  if (!fn)
    return CUDA_ERROR_NOT_FOUND;
  CUresult rc = fn(symbol, pfn, cuda_version, flags, status);
  if (rc == CUDA_SUCCESS && pfn && symbol)
    *pfn = wrap(entry_for_query(symbol, cuda_version, flags), *pfn);
  return rc;
}

} // namespace
} // namespace ubtrace::agent::gpu

// Called by libubtrace_preload.so's dlsym for every name starting "cu".
extern "C" __attribute__((visibility("default"))) void *
ubtrace_gpu_dlsym_result(const char *name, void *result) {
  using namespace ubtrace::agent::gpu;
  return wrap(entry_for_symbol(name), result);
}

// Called by libubtrace_preload.so's __cudaRegisterFatBinary (programs with
// the shared CUDA runtime). Nothing is rewritten here: the device maps need
// a CUDA context, which only exists when the runtime loads the module
// through the driver (cuLibraryLoadData), where the same image is
// rewritten. Registration only tells which object the image belongs to.
extern "C" __attribute__((visibility("default"))) void
ubtrace_gpu_fatbin_registered(const void *wrapper) {
  (void)wrapper;
}
