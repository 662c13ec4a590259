// Lists of named 64-bit values on the agent channel: the Symbols reply (the
// agent's helper addresses, for linking native code) and the agent's loss
// counters (the Stats reply, the Counters notice). Each entry is
//
//   u32 name length, the name (no NUL), u64 value
//
// one after another. A reader stops at the first entry that does not fit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ubtrace::agent {

using NamedValues = std::vector<std::pair<std::string, uint64_t>>;

void append_named_value(std::vector<uint8_t> &payload, std::string_view name,
                        uint64_t value);
// The entries of `payload` from byte `offset` on.
NamedValues read_named_values(std::span<const uint8_t> payload,
                              size_t offset = 0);

} // namespace ubtrace::agent
