// One kernel whose parameters have different PTX types: int (.u32), float
// (.f32), a pointer (.u64), a small struct passed by value (.b8 array with an
// alignment) and a 64-bit int (.u64). GPU probes read them as arg0..arg4.
//   param_types [SCALE]
#include <cstdint>
#include <cstdio>
#include <cstdlib>

struct Pair {
  int first;
  float second;
  short third;
};

__global__ void mixed_params(int count, float scale, float *out, Pair pair,
                             long long offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  out[i] = scale * static_cast<float>(pair.first + i) + pair.second +
           static_cast<float>(pair.third) + static_cast<float>(offset);
}

int main(int argc, char **argv) {
  float scale = argc > 1 ? static_cast<float>(std::atof(argv[1])) : 2.0f;
  const int count = 64;
  float *dout;
  cudaMalloc(&dout, count * sizeof(float));
  Pair pair{10, 0.5f, 3};
  long long offset = 1LL << 33;
  mixed_params<<<1, count>>>(count, scale, dout, pair, offset);
  float out[count];
  cudaError_t err = cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "param_types: %s\n", cudaGetErrorString(err));
    return 1;
  }
  double sum = 0;
  for (float v : out)
    sum += v;
  std::printf("param_types count=%d checksum=%.1f\n", count, sum);
  cudaFree(dout);
  return 0;
}
