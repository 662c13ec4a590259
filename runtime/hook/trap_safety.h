// Whether a trap of ours can kill a thread of this process.
//
// The kernel forces a synchronous SIGTRAP or SIGILL that the thread blocks:
// it unblocks it and resets its handler to the default, so the thread (and
// the process) dies at the trap. Traps the hooks place: a Trap site's int3
// (permanent), the int3 a Jump site carries at its patch address for the
// microseconds of a non-atomic patch (code_patcher.h), and the trap bytes
// at former instruction starts inside a Jump patch (hit only by a thread
// that was between those instructions when the patch went in).
//
// install_hook places the first two (int3: SIGTRAP) only when no thread
// blocks SIGTRAP, read from /proc/self/task/*/status (SigBlk) just before;
// the preload keeps SIGTRAP and SIGILL out of the masks the program sets
// through libc later (runtime/agent/preload_signals.c). The third kind
// (int3 or an invalid opcode: SIGTRAP or SIGILL) comes with any patch over
// several instructions; what remains is in hook.h.
#pragma once

#include <string>
#include <string_view>

namespace ubtrace::runtime::hook {

struct TrapBlocker {
  int tid = 0; // 0: none found
};

// A thread of this process that blocks SIGTRAP now, if any. Off the probe
// path (reads /proc).
TrapBlocker find_trap_blocker();

// "thread 1234 blocks SIGTRAP"
std::string describe(const TrapBlocker &blocker);

// In the error of an install refused for this reason ("cannot hook ADDR
// safely: ..."): the CLI skips such sites of a wildcard with a warning.
inline constexpr std::string_view kUnsafeSiteMarker = " safely: ";
inline bool is_unsafe_site_error(std::string_view error) {
  return error.find(kUnsafeSiteMarker) != std::string_view::npos;
}

} // namespace ubtrace::runtime::hook
