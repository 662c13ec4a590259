// The return path of return hooks: launch code, return stubs and the
// common return trampolines, shared by all sites.
//
// At entry of a return-hooked function the dispatcher pushes {slot, real
// return address, site} on the thread's shadow stack at index k and hands
// the entry trampoline launch k, which the trampoline jumps to with the
// registers of the function's entry:
//
//   launch k:  lea rsp,[rsp+8]         drop the real return address (the
//              call [rsp-32]           shadow entry has it) and call the
//                                      displaced instructions: the pushed
//                                      return address is stub k
//   stub k:    push k ; jmp common     (cells of 32 bytes, two sets: with
//                                      and without vector save)
//
// `common` builds a pt_regs frame (rsp = the caller's stack pointer after
// the return), calls ubt_hook_dispatch_return(frame, k, saved), which pops
// entry k (see hook.h for what goes with it) and runs the handler, writes
// the real return address over k, restores and `ret`s.
//
// Why a call: the return stack buffer then holds stub k above the caller's
// own return address, so the function's `ret` to stub k and the common
// code's `ret` to the caller are both predicted (writing the stub over the
// return address instead costs a certain mispredict per hit; the int3 path
// still does that, as it runs from a signal handler).
//
// Why one stub per depth: the stub address names the entry, so a return
// never has to guess from rsp, and the unwinder (unwind_info.h) can tell
// which entry holds the real return address of a frame it walks through.
#pragma once

#include "runtime/hook/cpu_features.h"
#include "runtime/hook/memory_map.h"
#include "runtime/hook/return_stubs.h"
#include "runtime/result.h"

#include <cstdint>

namespace ubtrace::runtime::hook {

Result<void> init_return_code(const CpuFeatures &cpu, const MemoryMap &map);

} // namespace ubtrace::runtime::hook
