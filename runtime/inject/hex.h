// Addresses in the injector's messages: "0x7f12345000".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace ubtrace::runtime::inject {

inline std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(value));
  return text;
}

} // namespace ubtrace::runtime::inject
