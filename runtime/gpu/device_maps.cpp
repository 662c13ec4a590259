#include "runtime/gpu/device_maps.h"

#include "runtime/abi.h"
#include "runtime/gpu/bytes.h"

#include <cstddef>
#include <cstring>
#include <limits>

namespace ubtrace::runtime::gpu {
namespace {

uint32_t round8(uint32_t n) {
  return (n + 7u) & ~7u;
}

uint32_t pow2_at_least(uint64_t n) {
  uint64_t p = 2;
  while (p < n)
    p <<= 1;
  return static_cast<uint32_t>(p);
}

bool is_min_max(AggKind agg) {
  return agg == AggKind::Min || agg == AggKind::Max;
}

// The u64 a min/max slot starts from: nothing compares worse than it.
uint64_t identity_of(AggKind agg, bool is_signed) {
  if (agg == AggKind::Min)
    return is_signed ? uint64_t(std::numeric_limits<int64_t>::max())
                     : std::numeric_limits<uint64_t>::max();
  return is_signed ? uint64_t(std::numeric_limits<int64_t>::min()) : 0;
}

uint64_t word_at(std::span<const uint8_t> bytes, size_t offset) {
  uint64_t v = 0;
  if (offset + 8 <= bytes.size())
    std::memcpy(&v, bytes.data() + offset, 8);
  return v;
}

void set_word(std::vector<uint8_t> &bytes, size_t offset, uint64_t v) {
  if (offset + 8 <= bytes.size())
    std::memcpy(bytes.data() + offset, &v, 8);
}

Result<DeviceMapLayout> layout_of(uint32_t index, const MapSpec &spec,
                                  const DevicePlanOptions &options) {
  DeviceMapLayout l;
  l.index = index;
  l.agg = spec.agg;
  l.host_kind = spec.kind;
  l.agg_signed = spec.value.is_signed ? 1 : 0;
  l.key_size = spec.key_size;
  l.value_size = spec.value_size;
  l.max_entries = spec.max_entries;
  l.key_stride = round8(spec.key_size);
  l.value_stride = round8(spec.value_size);
  switch (spec.role) {
  case MapRole::Events:
    l.kind = DeviceMapKind::Ring;
    if (options.ring_bytes < 4096 ||
        (options.ring_bytes & (options.ring_bytes - 1)) != 0)
      return make_error("the device ring size must be a power of two of at "
                        "least 4096 bytes");
    l.capacity = options.ring_bytes;
    l.values_offset = UBT_GPU_MAP_HEADER_BYTES;
    l.bytes = l.values_offset + l.capacity;
    return l;
  case MapRole::Scratch:
    l.kind = DeviceMapKind::ThreadLocal;
    l.bytes = uint64_t(l.value_stride) * spec.max_entries;
    return l;
  case MapRole::Globals:
    // Probes reading an aggregation fold ncpus slots: the arrays' slots.
    l.is_globals = 1;
    l.globals_ncpus = options.array_slots;
    break;
  case MapRole::User:
  // Written by the CLI for host probes only: GPU probes read "".
  case MapRole::ProbeNames:
    break;
  }
  switch (spec.kind) {
  case MapKind::Array:
  case MapKind::PerCpuArray:
    l.kind = DeviceMapKind::Array;
    l.slots = spec.kind == MapKind::PerCpuArray ? options.array_slots : 1;
    l.slot_stride = align_up(uint64_t(l.value_stride) * l.max_entries, 64);
    l.values_offset = UBT_GPU_MAP_HEADER_BYTES;
    l.bytes = l.values_offset + l.slot_stride * l.slots;
    return l;
  case MapKind::Hash:
  case MapKind::LruHash:
  case MapKind::PerCpuHash:
  case MapKind::PerCpuLruHash:
    l.kind = DeviceMapKind::Hash;
    if (spec.max_entries == 0)
      return make_error("map " + spec.name + " has no entries");
    l.capacity = pow2_at_least(uint64_t(spec.max_entries) * 2);
    if (spec.agg == AggKind::Min)
      l.init_kind =
          l.agg_signed ? UBT_GPU_INIT_MIN_SIGNED : UBT_GPU_INIT_MIN_UNSIGNED;
    else if (spec.agg == AggKind::Max && l.agg_signed)
      l.init_kind = UBT_GPU_INIT_MAX_SIGNED;
    l.states_offset = UBT_GPU_MAP_HEADER_BYTES;
    l.keys_offset = l.states_offset + 8ull * l.capacity;
    l.values_offset =
        align_up(l.keys_offset + uint64_t(l.key_stride) * l.capacity, 64);
    l.bytes = l.values_offset + uint64_t(l.value_stride) * l.capacity;
    return l;
  case MapKind::RingBuf:
    return make_error("map " + spec.name + " is a ring buffer of the script");
  }
  return make_error("map " + spec.name + " has an unknown kind");
}

} // namespace

Result<std::vector<DeviceMapLayout>>
plan_device_maps(std::span<const MapSpec> specs,
                 const DevicePlanOptions &options) {
  std::vector<DeviceMapLayout> out;
  out.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    auto l = layout_of(static_cast<uint32_t>(i), specs[i], options);
    if (!l)
      return std::move(l).take_error();
    if (l->bytes > (uint64_t(1) << 36))
      return make_error("map " + specs[i].name + " needs " +
                        std::to_string(l->bytes) +
                        " bytes of GPU memory: too many entries");
    out.push_back(*l);
  }
  return out;
}

uint64_t zero_prefix_bytes(const DeviceMapLayout &layout) {
  switch (layout.kind) {
  case DeviceMapKind::Hash:
    return layout.keys_offset; // header and states
  case DeviceMapKind::Array:
  case DeviceMapKind::Ring:
    return layout.bytes;
  case DeviceMapKind::None:
  case DeviceMapKind::ThreadLocal:
    return 0;
  }
  return 0;
}

std::vector<uint8_t> initial_image(const DeviceMapLayout &layout) {
  std::vector<uint8_t> image(zero_prefix_bytes(layout), 0);
  switch (layout.kind) {
  case DeviceMapKind::Ring:
    set_word(image, 8 * UBT_GPU_RING_CAPACITY_WORD, layout.capacity);
    break;
  case DeviceMapKind::Array:
    if (layout.is_globals)
      set_word(image, layout.values_offset + offsetof(abi::Globals, ncpus),
               layout.globals_ncpus);
    if (is_min_max(layout.agg)) {
      uint64_t id = identity_of(layout.agg, layout.agg_signed != 0);
      for (uint32_t s = 0; s < layout.slots; ++s)
        for (uint32_t e = 0; e < layout.max_entries; ++e)
          set_word(image,
                   layout.values_offset + s * layout.slot_stride +
                       uint64_t(e) * layout.value_stride,
                   id);
    }
    break;
  case DeviceMapKind::Hash:
  case DeviceMapKind::None:
  case DeviceMapKind::ThreadLocal:
    break;
  }
  return image;
}

bool merge_device_slots(const DeviceMapLayout &layout,
                        std::span<const uint8_t> slots_bytes,
                        std::vector<uint8_t> &out) {
  const uint32_t size = layout.value_size;
  const uint32_t stride = layout.value_stride;
  const size_t slots = stride ? slots_bytes.size() / stride : 0;
  out.assign(size, 0);
  if (slots == 0)
    return false;
  auto slot = [&](size_t s) { return slots_bytes.subspan(s * stride, size); };
  switch (layout.agg) {
  case AggKind::None:
    std::memcpy(out.data(), slot(0).data(), size);
    return true;
  case AggKind::Count:
  case AggKind::Sum:
  case AggKind::Avg:
  case AggKind::Stats:
  case AggKind::Hist:
  case AggKind::LHist: {
    bool any = false;
    for (uint32_t w = 0; w + 8 <= size; w += 8) {
      uint64_t total = 0;
      for (size_t s = 0; s < slots; ++s)
        total += word_at(slot(s), w);
      set_word(out, w, total);
      any |= total != 0;
    }
    if (layout.agg == AggKind::Avg || layout.agg == AggKind::Stats)
      return word_at(out, 8) != 0; // samples
    return any || layout.agg == AggKind::Sum;
  }
  case AggKind::TSeries:
    return false; // tseries() runs on the CPU only (ast/builtins.def)
  case AggKind::Min:
  case AggKind::Max: {
    bool is_min = layout.agg == AggKind::Min;
    bool sign = layout.agg_signed != 0;
    bool have = false;
    uint64_t best = 0;
    for (size_t s = 0; s < slots; ++s) {
      if (word_at(slot(s), 8) == 0)
        continue;
      uint64_t v = word_at(slot(s), 0);
      bool better = sign ? (is_min ? int64_t(v) < int64_t(best)
                                   : int64_t(v) > int64_t(best))
                         : (is_min ? v < best : v > best);
      if (!have || better)
        best = v;
      have = true;
    }
    set_word(out, 0, best);
    set_word(out, 8, have ? 1 : 0);
    return have;
  }
  }
  return false;
}

Result<void> for_each_device_entry(const DeviceMapLayout &layout,
                                   std::span<const uint8_t> image,
                                   const DeviceEntryVisitor &visit) {
  if (image.size() < layout.bytes)
    return make_error("device map " + std::to_string(layout.index) +
                      ": read back " + std::to_string(image.size()) +
                      " bytes of " + std::to_string(layout.bytes));
  std::vector<uint8_t> value;
  switch (layout.kind) {
  case DeviceMapKind::Array: {
    std::vector<uint8_t> slots(uint64_t(layout.slots) * layout.value_stride);
    for (uint32_t e = 0; e < layout.max_entries; ++e) {
      for (uint32_t s = 0; s < layout.slots; ++s)
        std::memcpy(slots.data() + uint64_t(s) * layout.value_stride,
                    image.data() + layout.values_offset +
                        s * layout.slot_stride +
                        uint64_t(e) * layout.value_stride,
                    layout.value_stride);
      if (!merge_device_slots(layout, slots, value))
        continue;
      uint8_t key[4];
      std::memcpy(key, &e, 4);
      visit(std::span<const uint8_t>(key, 4), value);
    }
    return {};
  }
  case DeviceMapKind::Hash:
    for (uint32_t b = 0; b < layout.capacity; ++b) {
      uint64_t state = word_at(image, layout.states_offset + 8ull * b);
      if (!(state & UBT_GPU_HASH_READY) || (state & UBT_GPU_HASH_DELETED))
        continue;
      auto one = image.subspan(layout.values_offset +
                                   uint64_t(b) * layout.value_stride,
                               layout.value_stride);
      if (!merge_device_slots(layout, one, value))
        continue;
      visit(image.subspan(layout.keys_offset + uint64_t(b) * layout.key_stride,
                          layout.key_size),
            value);
    }
    return {};
  case DeviceMapKind::None:
  case DeviceMapKind::Ring:
  case DeviceMapKind::ThreadLocal:
    return {};
  }
  return {};
}

uint64_t device_drops(const DeviceMapLayout &layout,
                      std::span<const uint8_t> header) {
  switch (layout.kind) {
  case DeviceMapKind::Hash:
    return word_at(header, 8 * UBT_GPU_MAP_DROPS_WORD);
  case DeviceMapKind::Ring:
    return word_at(header, 8 * UBT_GPU_RING_DROPS_WORD);
  case DeviceMapKind::Array:
  case DeviceMapKind::None:
  case DeviceMapKind::ThreadLocal:
    return 0;
  }
  return 0;
}

} // namespace ubtrace::runtime::gpu
