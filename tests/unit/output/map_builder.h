// Owns the key and value bytes of map entries for build_printed_map.
#pragma once

#include "backends/output/printed_map.h"
#include "tests/unit/output/helpers.h"

#include <deque>

namespace ubtrace::output::test {

class MapBuilder {
public:
  explicit MapBuilder(runtime::MapSpec spec) : spec_(std::move(spec)) {}

  MapBuilder &add(std::vector<uint8_t> key, std::vector<uint8_t> value) {
    keys_.push_back(std::move(key));
    values_.push_back(std::move(value));
    return *this;
  }

  PrintedMap build(size_t top = 0, uint32_t div = 0,
                   const FormatContext &ctx = {}) const {
    std::vector<MapEntry> entries;
    for (size_t i = 0; i < keys_.size(); ++i)
      entries.push_back({keys_[i], values_[i]});
    return build_printed_map(spec_, std::move(entries), ctx, top, div);
  }

  runtime::MapSpec &spec() { return spec_; }

private:
  runtime::MapSpec spec_;
  std::deque<std::vector<uint8_t>> keys_, values_;
};

inline runtime::MapSpec map_spec(std::string name, runtime::AggKind agg,
                                 ValueType key, ValueType value) {
  runtime::MapSpec s;
  s.name = std::move(name);
  s.agg = agg;
  s.key = std::move(key);
  s.value = std::move(value);
  s.key_size = s.key.size;
  s.value_size = s.value.size;
  return s;
}

inline ValueType no_key() {
  return ValueType{};
}

inline std::vector<uint8_t> str_bytes(const std::string &s, size_t size) {
  return Packer().str(s, size).bytes();
}

// Slot layouts (bundle.h): { value, is_set } and { total, count }.
inline std::vector<uint8_t> pair_bytes(uint64_t a, uint64_t b) {
  return Packer().u64(a).u64(b).bytes();
}

inline std::vector<uint8_t> buckets_bytes(const std::vector<uint64_t> &b) {
  Packer p;
  for (uint64_t v : b)
    p.u64(v);
  return p.bytes();
}

} // namespace ubtrace::output::test
