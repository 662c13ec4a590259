// The return path of return hooks: return stubs and the common return
// trampolines, shared by all sites.
//
// At entry of a return-hooked function the dispatcher pushes {slot, real
// return address, site} on the thread's shadow stack at index k and writes
// the address of stub k over the return address. Stub k is
//
//   push k ; jmp common        (16 bytes apart, two sets: with and without
//                               vector save)
//
// and `common` builds a pt_regs frame (rsp = the caller's stack pointer
// after the return), calls ubt_hook_dispatch_return(frame, k, saved),
// which pops entry k (and anything above it, stale after a longjmp) and
// runs the handler, writes the real return address over k, restores and
// leaves with `lea rsp,[rsp+8]; jmp [rsp-8]` (the slot is in the red zone,
// which signal delivery skips; a jmp keeps the indirect predictor instead
// of mispredicting a second ret).
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
