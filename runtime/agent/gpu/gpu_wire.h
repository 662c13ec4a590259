// What travels on the GPU channel (protocol.h's Gpu* messages) besides
// PODs: the GPU setup the CLI sends once the agent connects: the probe PTX,
// where each probe attaches, and the device layout of every map.
#pragma once

#include "runtime/gpu/device_maps.h"
#include "runtime/gpu/ptx_inject.h"
#include "runtime/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::agent::gpu {

struct WireAttachment {
  runtime::gpu::ProbeAttachment attachment;
  std::string binary; // kernel:BIN:NAME's BIN, resolved by the CLI; "" any
};

struct GpuSetup {
  std::string ptx; // probe module; map table not baked yet
  std::vector<WireAttachment> attachments;
  std::vector<runtime::gpu::DeviceMapLayout> maps; // one per bundle map
  uint32_t map_table_entries = 0;
  // How often the agent drains the device's events ring (printf & co.)
  // while the target runs; 0: no GPU probe sends events.
  uint32_t drain_interval_ms = 0;
};

std::vector<uint8_t> encode_setup(const GpuSetup &setup);
Result<GpuSetup> decode_setup(const std::vector<uint8_t> &bytes);

} // namespace ubtrace::agent::gpu
