// A shared library of kernels for the registration test: when it is
// dlopen'ed, its constructor registers its fatbin and kernels through
// __cudaRegisterFatBinary / __cudaRegisterFunction, which the test
// interposes the way the agent will. Built with the shared CUDA runtime.
namespace ubt_lib {

template <typename T> __global__ void scale(T *data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= factor;
}

} // namespace ubt_lib

extern "C" __global__ void lib_fill(int *data, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] = value;
}

// Launches every kernel once, so each has a host stub that registers it.
extern "C" int ubt_kernel_lib_launch(int *ints, float *floats, int n) {
  lib_fill<<<(n + 127) / 128, 128>>>(ints, 1, n);
  ubt_lib::scale<float><<<(n + 127) / 128, 128>>>(floats, 2.0f, n);
  ubt_lib::scale<int><<<(n + 127) / 128, 128>>>(ints, 3, n);
  return static_cast<int>(cudaGetLastError());
}

// Allocates, launches every kernel once and frees: for a program that only
// dlopen()s the library (dlopen_kernels.cpp), whose kernels the CLI cannot
// see when it starts.
extern "C" int ubt_kernel_lib_run(int n) {
  int *ints = nullptr;
  float *floats = nullptr;
  if (cudaMalloc(&ints, n * sizeof(int)) != cudaSuccess ||
      cudaMalloc(&floats, n * sizeof(float)) != cudaSuccess)
    return -1;
  int status = ubt_kernel_lib_launch(ints, floats, n);
  cudaDeviceSynchronize();
  cudaFree(ints);
  cudaFree(floats);
  return status;
}
