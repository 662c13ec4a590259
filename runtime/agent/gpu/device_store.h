// The device maps of the traced process, agent side: allocated once (in
// the first CUDA context that loads code; managed memory when the process
// sees several GPUs, so kernels on any of them reach the same maps),
// initialised from their layouts, read back into the shared-memory region
// and cleared on the CLI's behalf, and the device events ring drained into
// the region's ring. Read-backs write the calling thread's slot of each
// per-slot map (they run on one agent thread, so the device's totals are one
// slot the CLI merges with the CPU's): a map updated by CPU and GPU probes
// alike prints merged.
#pragma once

#include "runtime/agent/gpu/cuda_api.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/result.h"

#include <vector>

namespace ubtrace::runtime::maps {
class Region;
}

namespace ubtrace::agent::gpu {

struct DrainStats {
  uint64_t records = 0; // forwarded to the region's ring
  uint64_t lost = 0;    // dropped on the device since the last drain
};

class DeviceStore {
public:
  DeviceStore(const DriverCalls &cu,
              std::vector<runtime::gpu::DeviceMapLayout> layouts)
      : cu_(cu), layouts_(std::move(layouts)) {}

  // Allocates and initialises every map in the current context.
  Result<void> allocate(bool managed);
  bool allocated() const { return allocated_; }
  // Map table values: each bundle map's device address (0: none).
  std::vector<uint64_t> table() const { return addresses_; }

  // The device's totals into `region` (whose maps are the bundle's).
  Result<void> read_back(runtime::maps::Region &region);
  // Device events (printf, exit, print, ...) into the region's ring.
  Result<DrainStats> drain_ring(runtime::maps::Region &region);
  // clear() (zero=false) or zero() of map `index` on the device.
  Result<void> clear(uint32_t index, bool zero);

  void release(); // frees the maps (their context still alive)

private:
  Result<void> initialise(const runtime::gpu::DeviceMapLayout &layout);
  Result<void> check(CUresult rc, const char *what) const;

  const DriverCalls &cu_;
  std::vector<runtime::gpu::DeviceMapLayout> layouts_;
  std::vector<uint64_t> addresses_;
  std::vector<uint64_t> drops_seen_; // device drop counters already reported
  bool allocated_ = false;
};

} // namespace ubtrace::agent::gpu
