// Where the return stubs are (return_trampoline.h builds them): light
// enough for the general-registers-only dispatcher.
#pragma once

#include "runtime/hook/thread_state.h"

#include <cstdint>

namespace ubtrace::runtime::hook {

inline constexpr uint32_t kStubStride = 16;

struct ReturnCode {
  uint64_t stubs = 0; // set 0 (saves vectors), then set 1 (does not)
  uint64_t stubs_end = 0;
  uint64_t common[2] = {};
};

// Set once by init_return_code (return_trampoline.h), read-only after.
extern ReturnCode g_return_code;

inline uint64_t return_stub(uint32_t k, bool save_vectors) {
  return g_return_code.stubs +
         (save_vectors ? 0 : uint64_t{kShadowDepth} * kStubStride) +
         uint64_t{k} * kStubStride;
}

// The shadow index a stub address stands for; -1 when not a stub.
inline int64_t stub_index(uint64_t address) {
  if (address < g_return_code.stubs || address >= g_return_code.stubs_end)
    return -1;
  return static_cast<int64_t>(((address - g_return_code.stubs) / kStubStride) %
                              kShadowDepth);
}

} // namespace ubtrace::runtime::hook
