#include "runtime/inject/call_site.h"

#include <array>
#include <cstring>

namespace ubtrace::runtime::inject {
namespace {

int32_t rel32(const uint8_t *bytes) {
  int32_t value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

std::optional<uint64_t> slot_value(uint64_t slot, const RemoteMemory &memory) {
  auto value = memory.read_value<uint64_t>(slot);
  if (!value)
    return std::nullopt;
  return *value;
}

// The function a PLT entry at `entry` jumps to, or `entry` itself when it
// is no PLT entry known here.
std::optional<uint64_t> through_plt(uint64_t entry,
                                    const RemoteMemory &memory) {
  auto code = memory.read_value<std::array<uint8_t, 12>>(entry);
  if (!code)
    return std::nullopt;
  const uint8_t *c = code->data();
  size_t at = 0;
  if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
    at = 4; // endbr64
  if (c[at] == 0xf2)
    ++at; // bnd
  if (c[at] == 0xff && c[at + 1] == 0x25)
    return slot_value(entry + at + 6 + rel32(c + at + 2), memory);
  return entry;
}

} // namespace

std::optional<uint64_t> called_function(uint64_t return_address,
                                        const RemoteMemory &memory) {
  if (return_address < 6)
    return std::nullopt;
  auto before = memory.read_value<std::array<uint8_t, 6>>(return_address - 6);
  if (!before)
    return std::nullopt;
  const uint8_t *b = before->data();
  if (b[0] == 0xff && b[1] == 0x15) // call [rip + disp32]
    return slot_value(return_address + rel32(b + 2), memory);
  if (b[1] == 0xe8) // call rel32
    return through_plt(return_address + rel32(b + 2), memory);
  return std::nullopt;
}

} // namespace ubtrace::runtime::inject
