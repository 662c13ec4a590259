// Kernels for ptxsim's tests (compiled with nvcc -ptx at build time, never
// run on a GPU here): what nvcc emits for warp intrinsics, device printf,
// atomics, dynamic shared memory and integer/float conversions, so the
// interpreter is checked on real compiler output rather than on PTX written
// for it.
#include <cstdio>

extern "C" __global__ void printf_kernel(int i, long long l, double d, float f,
                                         const char *s, unsigned u) {
  printf("t%u i=%d l=%lld d=%.3f f=%g s=%s u=%u x=%#x c=%c [%5d|%-4d] %%\n",
         threadIdx.x, i, l, d, f, s, u, u, 'A' + threadIdx.x, i, i);
}

extern "C" __global__ void warp_sum(const int *in, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[t];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  out[t] = v;
}

extern "C" __global__ void shfl_modes(const int *in, int *up, int *down,
                                      int *idx, int *seg) {
  int t = threadIdx.x;
  int v = in[t];
  up[t] = __shfl_up_sync(0xffffffffu, v, 3);
  down[t] = __shfl_down_sync(0xffffffffu, v, 5);
  idx[t] = __shfl_sync(0xffffffffu, v, (t * 7) % 32);
  seg[t] = __shfl_down_sync(0xffffffffu, v, 2, 8);
}

extern "C" __global__ void votes(const int *in, unsigned *ballot, int *all,
                                 int *any, unsigned *active) {
  int t = threadIdx.x;
  bool p = in[t] > 0;
  ballot[t] = __ballot_sync(0xffffffffu, p);
  all[t] = __all_sync(0xffffffffu, p);
  any[t] = __any_sync(0xffffffffu, p);
  if (t % 3 == 0)
    active[t] = __activemask();
  else
    active[t] = 0;
}

extern "C" __global__ void reductions(const unsigned *in, unsigned *sum,
                                      unsigned *max, unsigned *bits) {
  int t = threadIdx.x;
  unsigned v = in[t];
  sum[t] = __reduce_add_sync(0xffffffffu, v);
  max[t] = __reduce_max_sync(0xffffffffu, v);
  bits[t] =
      __reduce_or_sync(0xffffffffu, v) ^ __reduce_and_sync(0xffffffffu, v);
}

extern "C" __global__ void matches(const int *in, unsigned *any, unsigned *all,
                                   int *all_pred) {
  int t = threadIdx.x;
  any[t] = __match_any_sync(0xffffffffu, in[t]);
  int pred = 0;
  all[t] = __match_all_sync(0xffffffffu, in[t] / 100, &pred);
  all_pred[t] = pred;
}

extern "C" __global__ void atomics(int *counter, float *fsum,
                                   unsigned long long *big, int *lo, int *hi,
                                   unsigned *wrap, int *cas_sum) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(counter, 1);
  atomicAdd(fsum, 0.5f);
  atomicAdd(big, 1ull << 32);
  atomicMin(lo, -t);
  atomicMax(hi, t);
  atomicInc(wrap, 9);
  int old = *cas_sum, seen;
  do {
    seen = old;
    old = atomicCAS(cas_sum, seen, seen + t);
  } while (old != seen);
}

extern "C" __global__ void reverse_dynamic(int *data, int n) {
  extern __shared__ int cells[];
  int t = threadIdx.x;
  if (t < n)
    cells[t] = data[blockIdx.x * n + t];
  __syncthreads();
  if (t < n)
    data[blockIdx.x * n + t] = cells[n - 1 - t];
}

extern "C" __global__ void int_math(const int *a, const int *b, int *out) {
  int t = threadIdx.x;
  int x = a[t], y = b[t];
  unsigned ux = static_cast<unsigned>(x), uy = static_cast<unsigned>(y);
  int *o = out + t * 12;
  o[0] = x / y;
  o[1] = x % y;
  o[2] = static_cast<int>(ux / uy);
  o[3] = static_cast<int>(ux % uy);
  o[4] = __clz(x);
  o[5] = __popc(ux);
  o[6] = static_cast<int>(__brev(ux));
  o[7] = __ffs(x);
  o[8] = __mulhi(x, y);
  o[9] = static_cast<int>(__byte_perm(ux, uy, 0x5140));
  o[10] = static_cast<int>(__funnelshift_l(ux, uy, y & 63));
  o[11] = (x >> (y & 31)) ^ static_cast<int>(ux >> (y & 31));
}

extern "C" __global__ void conversions(const float *f, const double *d, int *i,
                                       long long *l, float *g) {
  int t = threadIdx.x;
  float x = f[t];
  double y = d[t];
  int *io = i + t * 6;
  io[0] = static_cast<int>(x);
  io[1] = __float2int_rn(x);
  io[2] = __float2int_rd(x);
  io[3] = __float2int_ru(x);
  io[4] = static_cast<int>(static_cast<unsigned>(x < 0 ? -x : x));
  io[5] = static_cast<int>(y);
  l[t] = static_cast<long long>(y * 1e10);
  float *go = g + t * 6;
  go[0] = floorf(x);
  go[1] = ceilf(x);
  go[2] = truncf(x);
  go[3] = rintf(x);
  go[4] = static_cast<float>(y);
  go[5] = sqrtf(x < 0 ? -x : x) + x / 3.0f;
}
