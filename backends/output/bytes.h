// Reading little-endian scalars out of raw value bytes. Reads past the end
// yield zero bytes: a short buffer is a bug upstream, but printing must not
// read out of bounds because of it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

namespace ubtrace::output {

using Bytes = std::span<const uint8_t>;

inline uint64_t load_unsigned(Bytes bytes, size_t offset, size_t size) {
  uint64_t v = 0;
  if (offset < bytes.size()) {
    size_t n = std::min(size, bytes.size() - offset);
    std::memcpy(&v, bytes.data() + offset, std::min<size_t>(n, 8));
  }
  if (size < 8)
    v &= (uint64_t{1} << (size * 8)) - 1;
  return v;
}

inline int64_t load_signed(Bytes bytes, size_t offset, size_t size) {
  uint64_t v = load_unsigned(bytes, offset, size);
  if (size == 0 || size >= 8)
    return static_cast<int64_t>(v);
  unsigned shift = 64 - static_cast<unsigned>(size) * 8;
  return static_cast<int64_t>(v << shift) >> shift;
}

inline uint64_t load_u64(Bytes bytes, size_t offset) {
  return load_unsigned(bytes, offset, 8);
}

inline int64_t load_i64(Bytes bytes, size_t offset) {
  return load_signed(bytes, offset, 8);
}

// The bytes [offset, offset + size), clipped to what exists.
inline Bytes slice(Bytes bytes, size_t offset, size_t size) {
  if (offset >= bytes.size())
    return {};
  return bytes.subspan(offset, std::min(size, bytes.size() - offset));
}

} // namespace ubtrace::output
