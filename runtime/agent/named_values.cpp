#include "runtime/agent/named_values.h"

namespace ubtrace::agent {

void append_named_value(std::vector<uint8_t> &payload, std::string_view name,
                        uint64_t value) {
  uint32_t len = static_cast<uint32_t>(name.size());
  size_t at = payload.size();
  payload.resize(at + 4 + len + 8);
  __builtin_memcpy(payload.data() + at, &len, 4);
  if (len)
    __builtin_memcpy(payload.data() + at + 4, name.data(), len);
  __builtin_memcpy(payload.data() + at + 4 + len, &value, 8);
}

NamedValues read_named_values(std::span<const uint8_t> payload, size_t offset) {
  NamedValues out;
  size_t at = offset;
  while (at + 4 <= payload.size()) {
    uint32_t len;
    __builtin_memcpy(&len, payload.data() + at, 4);
    if (len > payload.size() - at - 4 || payload.size() - at - 4 - len < 8)
      break;
    uint64_t value;
    __builtin_memcpy(&value, payload.data() + at + 4 + len, 8);
    out.emplace_back(
        std::string(reinterpret_cast<const char *>(payload.data() + at + 4),
                    len),
        value);
    at += 4 + size_t(len) + 8;
  }
  return out;
}

} // namespace ubtrace::agent
