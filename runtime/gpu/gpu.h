// ubtrace_gpu: the offline half of the GPU backend. Fatbin parsing and
// writing, PTX parsing and probe injection; no LLVM, no exceptions, so the
// in-target agent can link it.
//
// Design note
// ===========
// Probes `kernel:BIN:NAME` / `kernelret:BIN:NAME` run as PTX inside the
// traced CUDA kernels. The lead's lifter turns each probe's eBPF into a PTX
// `.func`; this library puts calls to it into the application's kernels when
// the driver loads them.
//
// Calling convention (probe_abi.h). A probe is a `.func` with no return
// value taking nothing or one `.param .b64`: the generic address of a
// context block in the thread's local memory { u64 kernel_id (FNV-1a of the
// mangled name); u32 arg_count; u32 site (0 entry, 1 exit); u64 args[] }.
// args[i] is kernel parameter i widened to 64 bits (floats as raw bits,
// by-value structs as the generic address of their bytes in parameter
// space). The injected code loads the parameters itself, so the entry
// calls sit at the first instruction of the body (after its declarations,
// before any label); exit calls sit before every ret/exit, guarded by the
// same predicate when the ret/exit is guarded. Probes read %tid, %ctaid,
// %ntid, %nctaid, %smid, %warpid, %laneid and %globaltimer themselves.
// Probe functions are merged into each module as internal .func (no
// duplicate symbols when modules are JIT-linked); probe globals keep their
// linkage and are renamed only on a clash (ModuleRewriter reports renames).
// Maps: a probe module should reach device-resident maps through a
// `.visible .global` table of map base addresses that the agent fills with
// cuModuleGetGlobal + cuMemcpyHtoD after each load, so every module updates
// the same device buffers (a map defined in the probe PTX would be one copy
// per module).
//
// What the agent does at run time with these pieces:
//  * Wrap the driver's module loaders: cuModuleLoadData, cuModuleLoadDataEx,
//    cuModuleLoadFatBinary, cuLibraryLoadData (cudart 12+/13 loads through
//    the library API) and the cuLink* path (cuLinkAddData with PTX/fatbin)
//    for -rdc programs; cuModuleLoad/cuLibraryLoadFromFile read a file:
//    read it, then treat it as data. cudart finds these through
//    cuGetProcAddress(_v2), not the PLT: hook that too. This driver level
//    is the one that sees static-cudart programs (nvcc's default), whose
//    __cudaRegisterFatBinary is linked into the application.
//  * With the shared cudart, __cudaRegisterFatBinary can also be
//    interposed (LD_PRELOAD): it gets the wrapper, and the library's
//    __cudaRegisterFunction calls give host stub -> kernel name
//    (tests/gpu/register_test.cpp rehearses exactly this).
//  * For each image: ModuleRewriter::rewrite(ptr). Instrumented -> pass
//    driver_image() on (a wrapper for __cudaRegisterFatBinary, a PTX-only
//    fatbin or PTX text otherwise). The SASS is dropped exactly when a
//    kernel of the module matches a probe: the driver then must JIT the
//    rewritten PTX (pick device_sm = the device's SM so the best PTX entry
//    is used). NoMatch/NoPtx/Failed -> pass the original on unchanged (warn
//    once for NoPtx: SASS-only builds cannot be traced this way).
//  * The cache is keyed by a content hash of the image, so a module loaded
//    again (per context, per device, cuLibrary reloads) costs one lookup;
//    results stay alive as long as the rewriter (the driver keeps pointers).
//  * After a successful load of an instrumented module: fill the probe
//    module's map table (cuModuleGetGlobal), keep the CUmodule -> kernels
//    table (kernel_id -> name for `func`).
//
// Cost: a probe that takes the context makes each thread store 16 + 8n
// bytes to local memory per site; the lifter should pass an arg_mask of the
// arguments a probe reads, and emit context-free probes (`call p;` only)
// where it reads none.
//
// The run-time half now exists: runtime/agent/gpu (driver interception,
// device maps allocated once and baked into the probe PTX with
// map_table.h instead of a post-load copy, read-back at exit/print/
// interval, the device events ring), runtime/jit/nvptx_* (probe PTX from
// the lifter), backends/gpu (the CLI side). Device maps' layout:
// device_maps_abi.h / device_maps.h.
//
// Still to do: the cuLink* path and __cudaRegisterLinkedBinary (-rdc;
// wrapper version 2), arch-specific PTX (sm_90a: the entry must keep its
// arch flags), the JIT error log on failure (cuModuleLoadDataEx with
// CU_JIT_ERROR_LOG_BUFFER), and measuring the JIT cost and probe overhead
// on the device machine (tests/gpu/device-check.sh is prepared for that).
// Known limit: a thread that ends through `exit` inside a device function it
// called is not seen by kernelret probes (only the kernel body's ret/exit
// are instrumented).
#pragma once

#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/fatbin_format.h"
#include "runtime/gpu/fatbin_writer.h"
#include "runtime/gpu/image.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/map_table.h"
#include "runtime/gpu/module_rewriter.h"
#include "runtime/gpu/probe_abi.h"
#include "runtime/gpu/ptx_inject.h"
#include "runtime/gpu/ptx_merge.h"
#include "runtime/gpu/ptx_module.h"
