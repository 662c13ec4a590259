// BTF-defined maps: the `.maps` section's variables and the struct types that
// describe them (`__uint(type, ...)`, `__type(key, ...)`, ...).
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::vm::loader {

struct BtfMapDef {
  std::string name;
  uint32_t type = 0;
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
  uint32_t flags = 0;
};

// Every variable of the `.maps` DATASEC in `btf` (the raw .BTF section).
Result<std::vector<BtfMapDef>> parse_btf_maps(std::span<const uint8_t> btf);

} // namespace ubtrace::vm::loader
