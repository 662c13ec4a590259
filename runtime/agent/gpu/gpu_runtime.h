// The CUDA half of the in-target agent.
//
// The driver entry points that load code (cuModuleLoadData(Ex),
// cuModuleLoadFatBinary, cuModuleLoad, cuLibraryLoadData,
// cuLibraryLoadFromFile), launch it (cuLaunchKernel(Ex)) and tear contexts
// down reach the application through dlsym or cuGetProcAddress(_v2) (how
// cudart, static or shared, finds them); interpose.cpp hands out wrappers
// that call in here.
//
// On the first code load the runtime greets the CLI's GPU backend on the
// GPU channel, a socketpair end the CLI passed on the agent's own channel
// (protocol.h, MsgType::GpuChannel) for a script with GPU probes; without
// it (no GPU probes, or not traced) every image passes through untouched
// and nothing is connected to: a named socket could be anyone's. It receives
// the probe PTX and map layouts, allocates the device maps in the current
// context (or the primary context of device 0), bakes their addresses into
// the probe PTX and builds a ModuleRewriter for the device's SM. Each image
// then goes to the driver rewritten (SASS dropped so the driver JITs the
// instrumented PTX; cached by content) or unchanged (no kernel matches; no
// PTX, with one notice to the CLI naming the module).
//
// One agent thread serves the channel: map read-backs (the CLI asks before
// print() and interval probes, and the exit path before a context goes
// away), clear()/zero(), statistics, and the periodic drain of the device
// events ring. Teardown hooks and atexit ask that thread and wait for it,
// so every read-back writes the same thread slot of the region.
#pragma once

#include "runtime/agent/gpu/cuda_api.h"

namespace ubtrace::agent::gpu {

class GpuRuntime {
public:
  static GpuRuntime &instance();

  // The image to give the driver for `image` (read from `path` when the
  // application named a file; may be null). Never fails: on any problem
  // the original goes on and the CLI gets a notice.
  const void *image_for_driver(const void *image, const char *path);
  // A context or primary context is about to go away (or the process
  // exits): read the device maps back and drain the ring while they exist.
  void before_teardown(const char *why);
  // Whether tearing down this context / this device's primary context
  // takes the device maps with it.
  bool holds_maps(CUcontext ctx);
  bool holds_maps_on(CUdevice device);
  void launched();

  // The driver functions the agent calls for itself (resolved from the
  // loaded libcuda, not through any wrapper).
  const DriverCalls &driver();
  // An entry point of the loaded libcuda by its exported name (no wrapper).
  void *driver_symbol(const char *name);

  struct Impl; // gpu_runtime.cpp

private:
  GpuRuntime() = default;
  Impl *impl();
};

} // namespace ubtrace::agent::gpu
