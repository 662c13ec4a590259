// Whether a stopped thread's own stack can take the bootstrap frame
// (bootstrap_frame.h) below its red zone: the frame and a margin under it
// must lie in memory that is certainly that thread's stack, so that
// nothing but dead stack is written and a signal handler that runs on top
// of the stub still has room. Known stacks: the main thread's [stack]
// (it grows on demand below), and a glibc thread stack, an anonymous
// mapping with a PROT_NONE guard right under it and the thread's TCB
// (fs_base) at its top. Anything else (a user-provided stack inside a
// heap, an alternate signal stack, a coroutine stack) is unknown, and an
// unknown stack is refused: the injector tries another thread.
#pragma once

#include "runtime/inject/proc_maps.h"
#include "runtime/result.h"

#include <cstdint>
#include <sys/user.h>
#include <vector>

namespace ubtrace::runtime::inject {

// Room a glibc thread stack must keep under the frame.
constexpr uint64_t kStackMargin = 32 * 1024;

// Ok when [frame_low - kStackMargin, regs.rsp) is the thread's own stack
// (for [stack], [frame_low, rsp) with the rest left to its growth); else
// the reason ("runs on a stack the injector cannot bound (...)").
Result<void> check_stack_room(const std::vector<MappedRegion> &maps,
                              const user_regs_struct &regs, uint64_t frame_low);

} // namespace ubtrace::runtime::inject
