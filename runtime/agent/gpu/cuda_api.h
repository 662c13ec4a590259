// The few CUDA driver API types and entry points the agent uses or wraps,
// declared here with the driver's ABI (cuda.h, CUDA 12/13) so the agent
// builds without the toolkit and on machines that have only the driver.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ubtrace::agent::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUlibrary = struct CUlib_st *;
using CUfunction = struct CUfunc_st *;
using CUkernel = struct CUkern_st *;
using CUstream = struct CUstream_st *;
using CUjit_option = int;
using CUlibraryOption = int;
using cuuint64_t = uint64_t;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

// cuGetProcAddress flags.
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2;

// cuDeviceGetAttribute.
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

inline constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;

// Module loaders.
using cuModuleLoadData_t = CUresult (*)(CUmodule *, const void *);
using cuModuleLoadDataEx_t = CUresult (*)(CUmodule *, const void *, unsigned,
                                          CUjit_option *, void **);
using cuModuleLoadFatBinary_t = CUresult (*)(CUmodule *, const void *);
using cuModuleLoad_t = CUresult (*)(CUmodule *, const char *);
using cuLibraryLoadData_t = CUresult (*)(CUlibrary *, const void *,
                                         CUjit_option *, void **, unsigned,
                                         CUlibraryOption *, void **, unsigned);
using cuLibraryLoadFromFile_t = CUresult (*)(CUlibrary *, const char *,
                                             CUjit_option *, void **, unsigned,
                                             CUlibraryOption *, void **,
                                             unsigned);
// Launches.
using cuLaunchKernel_t = CUresult (*)(CUfunction, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      CUstream, void **, void **);
using cuLaunchKernelEx_t = CUresult (*)(const void *config, CUfunction, void **,
                                        void **);
// Context teardown: device maps are read back first.
using cuCtxDestroy_t = CUresult (*)(CUcontext);
using cuDevicePrimaryCtxRelease_t = CUresult (*)(CUdevice);
using cuDevicePrimaryCtxReset_t = CUresult (*)(CUdevice);
// Lookup.
using cuGetProcAddress_t = CUresult (*)(const char *, void **, int, cuuint64_t);
using cuGetProcAddress_v2_t = CUresult (*)(const char *, void **, int,
                                           cuuint64_t, int *);

// What the agent calls itself.
struct DriverCalls {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext *) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext *) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice *) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
};

} // namespace ubtrace::agent::gpu
