// Little-endian byte access for the binary formats the GPU backend reads
// (ELF, fatbin). Reads go through memcpy so unaligned fields are fine.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace ubtrace::runtime::gpu {

static_assert(std::endian::native == std::endian::little,
              "fatbin and ELF readers assume a little-endian host");

using Bytes = std::span<const uint8_t>;

template <class T> T load_le(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// Reads a T at `offset`, or returns false when it would run past the end.
template <class T> bool read_le(Bytes data, size_t offset, T &out) {
  if (offset > data.size() || data.size() - offset < sizeof(T))
    return false;
  out = load_le<T>(data.data() + offset);
  return true;
}

template <class T> void store_le(uint8_t *p, T value) {
  std::memcpy(p, &value, sizeof value);
}

template <class T> void append_le(std::vector<uint8_t> &out, T value) {
  size_t at = out.size();
  out.resize(at + sizeof value);
  store_le(out.data() + at, value);
}

constexpr uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

inline Bytes as_bytes(const void *data, size_t size) {
  return Bytes(static_cast<const uint8_t *>(data), size);
}

} // namespace ubtrace::runtime::gpu
