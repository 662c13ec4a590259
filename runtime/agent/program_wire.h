// A verified program on the agent channel: what the CLI's verifier proved
// (linked instructions, subprograms, helper call sites) and, for each map
// the object references, which map of the shared region it is. The agent
// binds it to its own map handles and helper addresses.
#pragma once

#include "runtime/result.h"
#include "runtime/vm/verifier.h"

#include <cstdint>
#include <vector>

namespace ubtrace::agent {

struct WireProgram {
  vm::VerifiedProgram program;
  std::vector<uint32_t> region_map; // object map index -> region map index
};

std::vector<uint8_t> encode_program(const WireProgram &p);
Result<WireProgram> decode_program(const std::vector<uint8_t> &bytes);

} // namespace ubtrace::agent
