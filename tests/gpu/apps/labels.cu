// Strings in device memory, for GPU probes' str() and buf(): fixed-width,
// NUL-terminated labels copied to the device; one thread per label
// measures its own. The labels (and so what a probe reads) are fixed:
//   slot 0 "alpha", 1 "beta", 2 "gamma delta", 3 "" (empty),
//   4 fifteen 'x' (fills its 16 bytes with the NUL)
//   labels
#include <cstdio>
#include <cstring>

extern "C" __global__ void label_lengths(const char *labels, int width,
                                         int *lengths, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  const char *s = labels + i * width;
  int n = 0;
  while (n < width && s[n] != 0)
    ++n;
  lengths[i] = n;
}

int main() {
  const int width = 16, count = 5;
  const char *text[count] = {"alpha", "beta", "gamma delta", "",
                             "xxxxxxxxxxxxxxx"};
  char host[count * width] = {};
  for (int i = 0; i < count; ++i)
    std::strncpy(host + i * width, text[i], width - 1);
  char *labels;
  int *lengths;
  cudaMalloc(&labels, sizeof host);
  cudaMalloc(&lengths, count * sizeof(int));
  cudaMemcpy(labels, host, sizeof host, cudaMemcpyHostToDevice);
  label_lengths<<<1, 32>>>(labels, width, lengths, count);
  int out[count];
  cudaError_t err =
      cudaMemcpy(out, lengths, sizeof out, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "labels: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::printf("labels lengths=%d,%d,%d,%d,%d\n", out[0], out[1], out[2],
              out[3], out[4]);
  cudaFree(labels);
  cudaFree(lengths);
  return 0;
}
