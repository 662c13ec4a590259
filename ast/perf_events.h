// The perf events software:EVENT and hardware:EVENT probes name, as the
// kernel numbers them (linux/perf_event.h: PERF_TYPE_SOFTWARE and
// PERF_TYPE_HARDWARE, and each type's config), with bpftrace's aliases and
// default counts. Shared by the attach point pass (which takes a name to
// its event), `ubtrace -l` (which lists them) and the manual.
//
// Decision: cpu-clock and task-clock, whose counts are nanoseconds of CPU
// time, are sampled as profile probes are (each thread's CPU-time timer,
// no perf event and no privilege needed); every other event is a perf
// event of each thread of the traced process, opened inside it
// (runtime/agent/perf_events.h).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace ubtrace::ast {

struct PerfEventInfo {
  std::string_view name;
  std::string_view alias; // "" when none
  uint32_t type;          // PERF_TYPE_SOFTWARE (1) or PERF_TYPE_HARDWARE (0)
  uint64_t config;
  uint64_t default_count; // when the attach point gives none
  bool cpu_time;          // sampled on the CPU-time timers instead
  // Happens only in the kernel (context switches, migrations): counted
  // with the kernel's part. Every other event counts the program's user
  // space only: a fault the kernel takes writing a signal frame would
  // otherwise send the thread another SIGTRAP before its handler's first
  // instruction, and a count of 1 would recurse until the stack ran out.
  bool in_kernel;
};

inline constexpr uint32_t kPerfTypeHardware = 0;
inline constexpr uint32_t kPerfTypeSoftware = 1;
inline constexpr uint32_t kPerfTypeBreakpoint = 5;

// watchpoint:ADDR:LEN:MODE, a hardware breakpoint of every thread of the
// traced process, as perf_event_attr has it: the type, bp_type (HW_BREAKPOINT_*
// bits) in config's place, bp_addr in config1's and bp_len in config2's.
inline constexpr uint32_t kBreakpointR = 1, kBreakpointW = 2, kBreakpointX = 4;
// Past the largest user-space address of x86-64 (five-level paging).
inline constexpr uint64_t kBreakpointAddressLimit = uint64_t(1) << 56;

// Both lists, in name order.
std::span<const PerfEventInfo> software_events();
std::span<const PerfEventInfo> hardware_events();

// The event a name or alias means, or nullptr.
const PerfEventInfo *find_perf_event(bool hardware, std::string_view name);

} // namespace ubtrace::ast
