// Building ValueTypes and the raw bytes the BPF side would store, for the
// output tests.
#pragma once

#include "backends/output/bytes.h"
#include "runtime/bundle.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ubtrace::output::test {

using runtime::ValueType;
using Kind = runtime::ValueType::Kind;

inline ValueType int_type(uint32_t size, bool is_signed) {
  ValueType t;
  t.kind = Kind::Integer;
  t.size = size;
  t.is_signed = is_signed;
  return t;
}
inline ValueType i64() {
  return int_type(8, true);
}
inline ValueType u64() {
  return int_type(8, false);
}

inline ValueType simple_type(Kind kind, uint32_t size) {
  ValueType t;
  t.kind = kind;
  t.size = size;
  return t;
}
inline ValueType string_type(uint32_t size) {
  return simple_type(Kind::String, size);
}

// Fields laid out back to back (no padding), as the tests choose.
inline ValueType composite(Kind kind, std::vector<std::string> names,
                           std::vector<ValueType> types,
                           std::string type_name = "") {
  ValueType t;
  t.kind = kind;
  t.type_name = std::move(type_name);
  uint32_t offset = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    ValueType::Field f;
    f.name = i < names.size() ? names[i] : "";
    f.offset = offset;
    f.type = types[i];
    offset += types[i].size;
    t.fields.push_back(std::move(f));
  }
  t.size = offset;
  return t;
}
inline ValueType tuple_type(std::vector<ValueType> types) {
  return composite(Kind::Tuple, {}, std::move(types));
}

// Little-endian bytes written at chosen offsets.
class Packer {
public:
  explicit Packer(size_t size = 0) : bytes_(size, 0) {}
  Packer &put(size_t offset, uint64_t v, size_t size = 8) {
    grow(offset + size);
    std::memcpy(bytes_.data() + offset, &v, size);
    return *this;
  }
  Packer &put_str(size_t offset, const std::string &s, size_t size) {
    grow(offset + size);
    std::memcpy(bytes_.data() + offset, s.data(), std::min(s.size(), size));
    return *this;
  }
  // Appends after what is there.
  Packer &u64(uint64_t v) { return put(bytes_.size(), v); }
  Packer &str(const std::string &s, size_t size) {
    return put_str(bytes_.size(), s, size);
  }
  const std::vector<uint8_t> &bytes() const { return bytes_; }
  Bytes span() const { return bytes_; }

private:
  void grow(size_t n) {
    if (bytes_.size() < n)
      bytes_.resize(n, 0);
  }
  std::vector<uint8_t> bytes_;
};

inline std::vector<uint8_t> le64(uint64_t v) {
  return Packer().u64(v).bytes();
}

// The hist(n, bits) bucket of a value, derived from the bucket bounds
// bpftrace prints: 0 holds negatives; values below 2^bits sit one per
// bucket (v + 1); a larger v with leading bit p goes to the bucket of the
// 2^bits that split [2^p, 2^(p+1)), picked by the `bits` bits below p.
inline uint32_t hist_bucket(int64_t value, uint32_t bits) {
  if (value < 0)
    return 0;
  const uint64_t n = uint64_t{1} << bits;
  const uint64_t v = static_cast<uint64_t>(value);
  if (v < n)
    return static_cast<uint32_t>(v + 1);
  const uint32_t p = 63 - static_cast<uint32_t>(__builtin_clzll(v));
  const uint64_t within = (v >> (p - bits)) & (n - 1);
  return static_cast<uint32_t>(((uint64_t{p} - bits + 1) << bits) + within + 1);
}

// lhist(v, min, max, step)'s bucket: 0 below min, the last at or above max.
inline uint32_t lhist_bucket(int64_t v, int64_t min, int64_t max,
                             int64_t step) {
  if (v < min)
    return 0;
  if (v >= max)
    return static_cast<uint32_t>((max - min) / step + 1);
  return static_cast<uint32_t>((v - min) / step + 1);
}

} // namespace ubtrace::output::test
