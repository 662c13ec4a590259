// Unwind info for the return stubs, so C++ exceptions (and pthread_cancel,
// and backtrace()) can unwind through a function whose return address was
// replaced.
//
// When an exception leaves a return-hooked function F, the unwinder reads
// F's return address from F's frame and finds stub k. Without help it has
// no FDE for that address and calls std::terminate. So one FDE, registered
// with libgcc's __register_frame, covers the stubs, with one row per stub:
//   CFA = rsp + 1, caller's rsp = CFA - 1 (the stub runs right after F's
//     ret, so rsp is the caller's; the bias of 1 keeps the stub frame's
//     identity apart from the caller's, see unwind_info.cpp)
//   return address = DW_CFA_val_expression: search the thread-state pool
//     for the entry k whose slot is rsp - 8 and yield its real return
//     address
// A DWARF expression cannot read thread-local storage, hence the search
// over all states at entry k (slot addresses are unique: they lie in each
// thread's own stack; released states are zeroed). It runs only while an
// exception unwinds through a hooked frame.
//
// The CIE names a personality routine that, in the cleanup phase, pops the
// entries of the frames being unwound (depth = k): the shadow stack stays
// exact after a catch, and the function's return handler does not run
// (like a kernel uretprobe, which does not fire on unwinding either).
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <vector>

namespace ubtrace::runtime::hook {

// Builds the .eh_frame image (CIE, FDE, terminator) for `stub_bytes` of
// stubs starting at `stubs` (exposed for tests).
std::vector<uint8_t> build_return_eh_frame(uint64_t stubs, uint32_t stub_bytes);

// Builds and registers it (once).
Result<void> register_return_unwind_info(uint64_t stubs, uint32_t stub_bytes);

} // namespace ubtrace::runtime::hook
