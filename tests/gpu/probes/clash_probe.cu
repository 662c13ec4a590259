// A probe module whose names clash with the multi_kernel sample: a probe
// function called `early_exit` and a global called `fill_c`, both
// extern "C" kernels there. The merge must rename them and call the
// renamed function.
#include "runtime/gpu/probe_abi.h"

extern "C" {

__device__ unsigned long long fill_c[4];

__device__ void early_exit(const ubt_gpu_probe_ctx *ctx) {
  atomicAdd(&fill_c[ctx->site & 3], 1ull);
}

} // extern "C"
