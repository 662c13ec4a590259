// Where the return stubs are (return_trampoline.h builds them): light
// enough for the general-registers-only dispatcher.
//
// One 32-byte cell per shadow index k and vector-save set: the launch code
// of k ends exactly where stub k begins, so the `call` in it pushes stub k
// as the hooked function's return address.
#pragma once

#include "runtime/hook/thread_state.h"

#include <cstdint>

namespace ubtrace::runtime::hook {

inline constexpr uint32_t kStubStride = 32;
// lea rsp,[rsp+8] (8 bytes, disp32 form); call qword [rsp-32] (4 bytes).
inline constexpr uint32_t kLaunchBytes = 12;
// Where the entry trampoline leaves the address it jumps to (launch code or
// the displaced instructions) and the displaced instructions' address for
// the launch code's call, below the function's entry rsp: in its red zone,
// which nothing uses at a function's entry and signal delivery skips.
inline constexpr int32_t kLaunchTargetBelowRsp = 16;
inline constexpr int32_t kLaunchBodyBelowRsp = 24;

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

// The launch code that calls a function's displaced instructions so that
// it returns to `stub`.
inline uint64_t launch_of(uint64_t stub) {
  return stub - kLaunchBytes;
}

// The shadow index a stub address stands for; -1 when not a stub.
inline int64_t stub_index(uint64_t address) {
  if (address < g_return_code.stubs || address >= g_return_code.stubs_end)
    return -1;
  return static_cast<int64_t>(((address - g_return_code.stubs) / kStubStride) %
                              kShadowDepth);
}

} // namespace ubtrace::runtime::hook
