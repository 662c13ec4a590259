// Tiled matrix multiply C = A * B of N x N floats through shared memory.
//   matmul [N]
// Prints a checksum of C and compares one element with a host computation.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kTile = 16;

__global__ void matmul_tiled(const float *a, const float *b, float *c, int n) {
  __shared__ float ta[kTile][kTile];
  __shared__ float tb[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (n + kTile - 1) / kTile; ++t) {
    int ac = t * kTile + threadIdx.x;
    int br = t * kTile + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? a[row * n + ac] : 0.0f;
    tb[threadIdx.y][threadIdx.x] = (br < n && col < n) ? b[br * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k)
      acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n)
    c[row * n + col] = acc;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 256;
  if (n <= 0) {
    std::fprintf(stderr, "usage: matmul [N>0]\n");
    return 2;
  }
  size_t count = static_cast<size_t>(n) * n;
  std::vector<float> a(count), b(count), c(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i % 17) * 0.25f;
    b[i] = static_cast<float>(i % 13) * 0.5f;
  }
  float *da, *db, *dc;
  cudaMalloc(&da, count * sizeof(float));
  cudaMalloc(&db, count * sizeof(float));
  cudaMalloc(&dc, count * sizeof(float));
  cudaMemcpy(da, a.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  dim3 block(kTile, kTile);
  dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
  matmul_tiled<<<grid, block>>>(da, db, dc, n);
  cudaError_t err =
      cudaMemcpy(c.data(), dc, count * sizeof(float), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "matmul: %s\n", cudaGetErrorString(err));
    return 1;
  }
  double expect = 0;
  for (int k = 0; k < n; ++k)
    expect += static_cast<double>(a[k]) * b[static_cast<size_t>(k) * n];
  double checksum = 0;
  for (size_t i = 0; i < count; ++i)
    checksum += c[i];
  bool ok = std::fabs(expect - c[0]) <= 1e-3 * std::fabs(expect) + 1e-3;
  std::printf("matmul n=%d checksum=%.1f c00=%s\n", n, checksum,
              ok ? "ok" : "MISMATCH");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return ok ? 0 : 1;
}
