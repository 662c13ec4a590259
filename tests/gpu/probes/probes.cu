// Probe functions for the offline injection tests, written in CUDA C and
// compiled with `nvcc -rdc=true -ptx` so each stays a `.func` of its own.
// They follow runtime/gpu/probe_abi.h the way the lifter's output will:
// one context pointer (or nothing), device-resident maps as __device__
// globals, builtins read from special registers.
#include "runtime/gpu/probe_abi.h"

namespace {
constexpr unsigned kSlots = 64;

__device__ unsigned slot_of(const ubt_gpu_probe_ctx *ctx) {
  return static_cast<unsigned>((ctx->kernel_id ^ ctx->site) % kSlots);
}
} // namespace

extern "C" {

// @[kernel, site] = count(): one counter per map slot.
__device__ unsigned long long __ubt_map_count[kSlots];
// @last[kernel] = nsecs: the latest %globaltimer seen.
__device__ unsigned long long __ubt_map_last_ns[kSlots];
// @args = sum of every argument, and the thread that saw them.
__device__ unsigned long long __ubt_map_arg_sum[16];
__device__ unsigned int __ubt_map_first_thread[3];
// count() without a context: the cheapest probe there is.
__device__ unsigned long long __ubt_map_bare_count;

__device__ void __ubt_probe_count(const ubt_gpu_probe_ctx *ctx) {
  atomicAdd(&__ubt_map_count[slot_of(ctx)], 1ull);
}

__device__ void __ubt_probe_timestamp(const ubt_gpu_probe_ctx *ctx) {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  atomicMax(&__ubt_map_last_ns[slot_of(ctx)], now);
}

__device__ void __ubt_probe_args(const ubt_gpu_probe_ctx *ctx) {
  unsigned n = ctx->arg_count < 16 ? ctx->arg_count : 16;
  for (unsigned i = 0; i < n; ++i)
    atomicAdd(&__ubt_map_arg_sum[i], ctx->args[i]);
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    __ubt_map_first_thread[0] = blockDim.x;
    __ubt_map_first_thread[1] = gridDim.x;
    __ubt_map_first_thread[2] = ctx->site;
  }
}

__device__ void __ubt_probe_bare() {
  atomicAdd(&__ubt_map_bare_count, 1ull);
}

} // extern "C"
