// Memory-bound vector add: c[i] = a[i] + b[i].
//   vector_add [N] [REPEAT]
// Runs the kernel REPEAT times over N floats and prints a checksum that does
// not depend on REPEAT, so an instrumented run can be compared with a plain
// one.
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

static int check(cudaError_t err, const char *what) {
  if (err == cudaSuccess)
    return 0;
  std::fprintf(stderr, "vector_add: %s: %s\n", what, cudaGetErrorString(err));
  std::exit(1);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1 << 20;
  int repeat = argc > 2 ? std::atoi(argv[2]) : 1;
  if (n <= 0 || repeat <= 0) {
    std::fprintf(stderr, "usage: vector_add [N>0] [REPEAT>0]\n");
    return 2;
  }
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000);
    b[i] = static_cast<float>((i * 7) % 1000) * 0.5f;
  }
  size_t bytes = sizeof(float) * static_cast<size_t>(n);
  float *da, *db, *dc;
  check(cudaMalloc(&da, bytes), "cudaMalloc");
  check(cudaMalloc(&db, bytes), "cudaMalloc");
  check(cudaMalloc(&dc, bytes), "cudaMalloc");
  check(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice), "copy a");
  check(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice), "copy b");
  int block = 256;
  int grid = (n + block - 1) / block;
  // UBT_KERNEL_TIME=1: the GPU time of the launches (events), on stderr, for
  // tests/gpu/device-check.sh's overhead measurement. One warm-up launch
  // first, so module loading and JIT are not in the timing.
  bool timed = std::getenv("UBT_KERNEL_TIME") != nullptr;
  cudaEvent_t begin, end;
  if (timed) {
    vector_add<<<grid, block>>>(da, db, dc, n);
    check(cudaDeviceSynchronize(), "warm-up");
    cudaEventCreate(&begin);
    cudaEventCreate(&end);
    cudaEventRecord(begin);
  }
  for (int r = 0; r < repeat; ++r)
    vector_add<<<grid, block>>>(da, db, dc, n);
  check(cudaGetLastError(), "launch");
  if (timed) {
    cudaEventRecord(end);
    cudaEventSynchronize(end);
    float ms = 0;
    cudaEventElapsedTime(&ms, begin, end);
    std::fprintf(stderr, "kernel_ms=%.4f launches=%d\n", ms, repeat);
  }
  check(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost), "copy c");
  double checksum = 0;
  for (int i = 0; i < n; ++i)
    checksum += c[i];
  std::printf("vector_add n=%d repeat=%d checksum=%.1f\n", n, repeat, checksum);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return 0;
}
