// CUDA runtime calls in a known number, with or without a GPU:
//   cuda_calls [LAUNCHES]
// makes 3 cudaMalloc, 2 cudaMemcpy host to device (4096 bytes each),
// LAUNCHES cudaLaunchKernel of vec_add (grid 4, block 256: 1024 threads),
// 1 cudaDeviceSynchronize, 1 cudaMemcpy device to host (4096 bytes) and
// 3 cudaFree. Errors (no GPU, no driver) are counted, not fatal, so the
// sequence of calls is the same everywhere; the scripts' tests rely on it.
#include <cstdio>
#include <cstdlib>

__global__ void vec_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

static int errors = 0;
static void note(cudaError_t err) {
  if (err != cudaSuccess)
    errors++;
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? std::atoi(argv[1]) : 5;
  const int n = 1024;
  const size_t bytes = n * sizeof(float);
  static float host[n];
  for (int i = 0; i < n; i++)
    host[i] = static_cast<float>(i);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  note(cudaMalloc(&a, bytes));
  note(cudaMalloc(&b, bytes));
  note(cudaMalloc(&c, bytes));
  note(cudaMemcpy(a, host, bytes, cudaMemcpyHostToDevice));
  note(cudaMemcpy(b, host, bytes, cudaMemcpyHostToDevice));
  dim3 grid(4), block(256);
  int count = n;
  void *args[] = {&a, &b, &c, &count};
  // cudaLaunchKernel itself rather than <<<>>>: the triple-chevron launch
  // skips it when the call configuration cannot be pushed (no driver).
  for (int i = 0; i < launches; i++)
    note(cudaLaunchKernel(reinterpret_cast<const void *>(vec_add), grid, block,
                          args, 0, nullptr));
  note(cudaDeviceSynchronize());
  note(cudaMemcpy(host, c, bytes, cudaMemcpyDeviceToHost));
  note(cudaFree(a));
  note(cudaFree(b));
  note(cudaFree(c));
  std::printf("cuda_calls: %d launches, %d errors, c[1]=%.1f\n", launches,
              errors, host[1]);
  return 0;
}
