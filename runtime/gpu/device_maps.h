// Device-resident maps, host side: which maps of a bundle live on the GPU,
// in what layout (device_maps_abi.h), what they hold before the first
// update, and how a copy read back from the device turns into entries the
// shared-memory maps take. The CLI plans the maps and compiles probes
// against the plan; the agent receives the same plan, allocates the maps
// (once per CUDA context) and reads them back. No LLVM, no exceptions.
#pragma once

#include "runtime/bundle.h"
#include "runtime/gpu/device_maps_abi.h"
#include "runtime/result.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace ubtrace::runtime::gpu {

enum class DeviceMapKind : uint8_t {
  None,        // no device storage (a map no GPU probe can reach)
  Array,       // values indexed by a u32 key; per-SM slots for aggregations
  Hash,        // keyed map, fixed capacity
  Ring,        // the events ring buffer
  ThreadLocal, // the scratch map: each GPU thread's local memory
};

// One map's device storage. POD: it travels to the agent as bytes.
struct DeviceMapLayout {
  uint32_t index = 0; // in the bundle's maps
  DeviceMapKind kind = DeviceMapKind::None;
  AggKind agg = AggKind::None;
  MapKind host_kind = MapKind::Hash;     // the shared-memory map's kind
  uint8_t agg_signed = 0;                // min/max compare signed
  uint8_t init_kind = UBT_GPU_INIT_COPY; // new hash entries (abi.h)
  uint8_t is_globals = 0; // abi::Globals: ncpus = the arrays' slot count
  uint32_t globals_ncpus = 0;
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
  uint32_t key_stride = 0;   // key_size rounded up to 8
  uint32_t value_stride = 0; // value_size rounded up to 8
  uint32_t slots = 1;        // Array: per-SM slots (1 for plain values)
  uint32_t capacity = 0;     // Hash: buckets; Ring: data bytes
  uint64_t slot_stride = 0;  // Array: bytes between slots
  uint64_t states_offset = 0;
  uint64_t keys_offset = 0;
  uint64_t values_offset = 0;
  uint64_t bytes = 0; // the whole allocation (ThreadLocal: per thread)
};

struct DevicePlanOptions {
  uint32_t ring_bytes = 1u << 20; // device events ring, a power of two
  uint32_t array_slots = UBT_GPU_ARRAY_SLOTS;
};

// One layout per map of `specs`, in the same order.
Result<std::vector<DeviceMapLayout>>
plan_device_maps(std::span<const MapSpec> specs,
                 const DevicePlanOptions &options = {});

// What a device map holds before any probe ran: zeros, except the identity
// of min/max slots (so device atomics can fold into them) and the ring's
// capacity word. Arrays and rings only: a hash needs only its states
// zeroed (zero_prefix_bytes() of them), values are written on insert.
std::vector<uint8_t> initial_image(const DeviceMapLayout &layout);
uint64_t zero_prefix_bytes(const DeviceMapLayout &layout);

// Slot-merges `slots` values of one entry into `out` (value_size bytes)
// the way the printer merges CPU slots; false if no slot was ever set
// (count 0, no min/max/avg sample, an empty histogram).
bool merge_device_slots(const DeviceMapLayout &layout,
                        std::span<const uint8_t> slots_bytes,
                        std::vector<uint8_t> &out);

// Each live entry of a device map copied back to the host (the whole
// allocation, `image`): the key as the shared-memory map takes it and the
// merged value. Hash entries in the middle of an insert are skipped.
using DeviceEntryVisitor = std::function<void(std::span<const uint8_t> key,
                                              std::span<const uint8_t> value)>;
Result<void> for_each_device_entry(const DeviceMapLayout &layout,
                                   std::span<const uint8_t> image,
                                   const DeviceEntryVisitor &visit);

// Updates dropped on the device (a full hash map; the ring's lost records).
uint64_t device_drops(const DeviceMapLayout &layout,
                      std::span<const uint8_t> header);

} // namespace ubtrace::runtime::gpu
