// One module with several kernels: a C++ function template (mangled), an
// extern "C" kernel (plain name), a kernel that calls a non-inlined device
// function, and one that leaves early through inline-PTX `exit` under a
// predicate declared in a nested scope.
//   multi_kernel [N]
#include <cstdio>
#include <cstdlib>

namespace ubt_samples {

template <typename T> __global__ void scale_kernel(T *data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= factor;
}

__device__ __noinline__ int collatz_steps(unsigned int x) {
  int steps = 0;
  while (x > 1 && steps < 1000) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    ++steps;
  }
  return steps;
}

__global__ void collatz(int *steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    steps[i] = collatz_steps(static_cast<unsigned int>(i + 1));
}

} // namespace ubt_samples

extern "C" __global__ void fill_c(int *data, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  data[i] = value + i;
}

extern "C" __global__ void early_exit(int *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Threads past the end leave through `exit` under a predicate that lives
  // only inside this inline-asm scope.
  asm volatile("{\n\t.reg .pred past;\n\t"
               "setp.ge.s32 past, %0, %1;\n\t"
               "@past exit;\n\t}" ::"r"(i),
               "r"(n));
  data[i] = -data[i];
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (n <= 0)
    return 2;
  int *di;
  float *df;
  double *dd;
  cudaMalloc(&di, n * sizeof(int));
  cudaMalloc(&df, n * sizeof(float));
  cudaMalloc(&dd, n * sizeof(double));
  cudaMemset(df, 0, n * sizeof(float));
  cudaMemset(dd, 0, n * sizeof(double));
  int block = 128, grid = (n + block - 1) / block;
  fill_c<<<grid, block>>>(di, 5, n);
  early_exit<<<grid, block>>>(di, n);
  ubt_samples::scale_kernel<float><<<grid, block>>>(df, 2.0f, n);
  ubt_samples::scale_kernel<double><<<grid, block>>>(dd, 3.0, n);
  long long sum = 0;
  int *host = static_cast<int *>(std::malloc(n * sizeof(int)));
  cudaMemcpy(host, di, n * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i)
    sum += host[i];
  ubt_samples::collatz<<<grid, block>>>(di, n);
  cudaError_t err =
      cudaMemcpy(host, di, n * sizeof(int), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "multi_kernel: %s\n", cudaGetErrorString(err));
    return 1;
  }
  long long steps = 0;
  for (int i = 0; i < n; ++i)
    steps += host[i];
  std::printf("multi_kernel n=%d fill_sum=%lld collatz_steps=%lld\n", n, sum,
              steps);
  std::free(host);
  cudaFree(di);
  cudaFree(df);
  cudaFree(dd);
  return 0;
}
