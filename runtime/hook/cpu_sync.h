// Process-wide barriers for code patching and hook removal.
//
// sync_cores(): every thread of the process executes a core-serializing
// instruction before this returns, so none keeps running bytes it fetched
// before a patch (membarrier PRIVATE_EXPEDITED_SYNC_CORE). barrier_all():
// every running thread passes a full memory barrier (PRIVATE_EXPEDITED),
// the heavy side of the asymmetric fence that lets the hot path use plain
// stores. Both register with the kernel on first use (again after fork(),
// which drops the registration). Without membarrier, an mprotect() that
// forces a TLB shootdown stands in: its IPIs interrupt every CPU running
// this process, and the return from the interrupt serializes.
#pragma once

namespace ubtrace::runtime::hook {

void sync_cores();
void barrier_all();

} // namespace ubtrace::runtime::hook
