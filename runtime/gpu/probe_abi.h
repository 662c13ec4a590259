/* The calling convention between an instrumented CUDA kernel and a GPU
 * probe function. Plain C so probe code written in CUDA C (tests, stdlib
 * helpers) can include it; the PTX the lifter emits must follow it too.
 *
 * A probe is a PTX `.func` with no return value and either no parameter or
 * one 64-bit parameter (`.param .b64`): the generic address of a context
 * block in the calling thread's local memory:
 *
 *   offset  0  u64 kernel_id   FNV-1a 64 of the kernel's mangled name
 *   offset  8  u32 arg_count   number of kernel parameters
 *   offset 12  u32 site        UBT_GPU_SITE_ENTRY or UBT_GPU_SITE_EXIT
 *   offset 16  u64 args[arg_count]
 *
 * args[i] is kernel parameter i widened to 64 bits: integers zero- or
 * sign-extended by their PTX type (.u/.b zero, .s sign), floats as their
 * raw bits (f32 in the low half), pointers as the generic address the
 * kernel received. A parameter passed by value as a byte array (a struct:
 * `.param .align A .b8 name[N]`) is given as the generic address of its
 * bytes in the kernel's parameter space (cvta.param), valid for the whole
 * kernel. Texture/sampler/surface references read as 0. Parameters left out
 * of an attachment's arg_mask are not written (their slots are undefined).
 *
 * The probe reads the GPU builtins itself: %tid/%ntid/%ctaid/%nctaid for
 * threadIdx/blockDim/blockIdx/gridDim, %smid, %warpid, %laneid, and
 * %globaltimer for nsecs. The block is the same for every probe called at
 * one site, in attachment order, and is rebuilt at each site.
 */
#ifndef UBTRACE_RUNTIME_GPU_PROBE_ABI_H
#define UBTRACE_RUNTIME_GPU_PROBE_ABI_H

#include <stdint.h>

#define UBT_GPU_SITE_ENTRY 0u
#define UBT_GPU_SITE_EXIT 1u

#define UBT_GPU_CTX_KERNEL_ID_OFFSET 0
#define UBT_GPU_CTX_ARG_COUNT_OFFSET 8
#define UBT_GPU_CTX_SITE_OFFSET 12
#define UBT_GPU_CTX_ARGS_OFFSET 16

struct ubt_gpu_probe_ctx {
  uint64_t kernel_id;
  uint32_t arg_count;
  uint32_t site;
  uint64_t args[1]; /* arg_count of them; [1] keeps this valid C++ */
};

#endif /* UBTRACE_RUNTIME_GPU_PROBE_ABI_H */
